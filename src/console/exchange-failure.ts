/**
 * The service failing the console's code exchange: the token endpoint answered 5xx. That is the service's failure
 * (its store, say), not a sign-in that did not complete, so the console answers its own 500 instead of the "try
 * again" page. The token endpoint's edge has already told `onError` the real cause of a `server_error`; the console
 * then does not report this stand-in a second time.
 */

/**
 * Thrown by the console's callback when the token endpoint answers its code exchange with a 5xx.
 *
 * @example if (answer.status >= 500) throw new ExchangeFailure(answer.status, answer.body);
 */
export class ExchangeFailure extends Error {
  /** Whether the service has reported the cause itself: a `server_error` answer, which its edge reports to `onError`. */
  readonly reported: boolean;

  constructor(status: number, body: string | undefined) {
    let code: unknown;
    try {
      code = (JSON.parse(body ?? '') as { error?: unknown }).error;
    } catch {
      code = undefined;
    }
    super(`the token endpoint answered the console's code exchange with ${status}${typeof code === 'string' ? ` ${code}` : ''}`);
    this.name = 'ExchangeFailure';
    this.reported = code === 'server_error';
  }
}
