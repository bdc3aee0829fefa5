/**
 * A refused console action: a clear message on the page, nothing changed, and a `console.denied` audit event naming
 * the operator, the action and the reason (the router emits it, once, for every refusal).
 */
import type { ParamMap } from '../http/params.js';
import type { ConsoleMessages } from './messages/console-messages.js';

/** The longest target a refusal's event names, and the longest action. */
const MAX_TARGET = 200;

/**
 * The action a refusal's event names, `METHOD path` of the request below the account, cut as its target is: the
 * path is the caller's to write, and a refusal needs no session (a forged form is one), so uncut anyone could put
 * kilobytes into every `console.denied` row of an account's audit log.
 *
 * @example refusedAction(`POST apps/${clientId}/delete`); // at most 200 characters
 */
export function refusedAction(action: string): string {
  return action.slice(0, MAX_TARGET);
}

/**
 * The target a refusal's event names, cut as its action is: each refusal's own target comes from the caller's path or
 * form too (an app's id in a path with too many segments, say), so one place cuts them all.
 *
 * @example refusedTarget(refusal.target ?? aim.target); // at most 200 characters, or undefined
 */
export function refusedTarget(target: string | undefined): string | undefined {
  return target?.slice(0, MAX_TARGET);
}

/**
 * The client id or kid an account path names (`apps/{clientId}/…`, `keys/{kid}/revoke`, decoded): what a change
 * refused before its action ran (no session, a wrong CSRF token, a viewer) was aimed at, for the event.
 *
 * @example pathTarget(['apps', 'client-a', 'disable']); // 'client-a'
 */
export function pathTarget(parts: readonly string[]): string | undefined {
  if ((parts[0] !== 'apps' && parts[0] !== 'keys') || parts.length < 2) return undefined;
  const target = parts[1] ?? '';
  return target === '' ? undefined : target.slice(0, MAX_TARGET);
}

/**
 * The user a sessions form names (`user`): the target of a refused session change.
 *
 * @example formTarget(form); // 'u-bob'
 */
export function formTarget(form: ParamMap): string | undefined {
  const user = (form.get('user')?.[0] ?? '').trim();
  return user === '' ? undefined : user.slice(0, MAX_TARGET);
}

/** Why an action was refused; the reason goes into the audit event as is. */
export type RefusalReason =
  | 'csrf'
  | 'viewer'
  | 'account'
  | 'unknown_app'
  | 'unknown_kid'
  | 'key_based_app'
  | 'public_app'
  | 'console_client'
  | 'invalid_input'
  | 'keys_account'
  | 'no_key_ring'
  | 'unsupported'
  | 'unknown_account'
  | 'console_disabled'
  | 'resubmitted'
  | 'throttled';

const MESSAGES: Readonly<Record<RefusalReason, keyof ConsoleMessages>> = {
  csrf: 'refusedCsrf',
  viewer: 'refusedViewer',
  account: 'refusedAccount',
  unknown_app: 'refusedUnknownApp',
  unknown_kid: 'refusedUnknownKid',
  key_based_app: 'refusedKeyBasedSecret',
  public_app: 'refusedPublicSecret',
  console_client: 'refusedConsoleClient',
  invalid_input: 'refusedInvalid',
  keys_account: 'refusedKeysAccount',
  no_key_ring: 'refusedNoRing',
  unsupported: 'refusedUnsupported',
  unknown_account: 'refusedUnknownAccount',
  console_disabled: 'refusedConsoleDisabled',
  resubmitted: 'refusedResubmitted',
  throttled: 'refusedTooManySignIns',
};

const STATUS: Partial<Record<RefusalReason, number>> = {
  csrf: 403,
  viewer: 403,
  account: 403,
  keys_account: 403,
  console_client: 403,
  console_disabled: 403,
  resubmitted: 409,
  throttled: 429,
  unknown_app: 404,
  unknown_kid: 404,
  unknown_account: 404,
};

/** Thrown by the console's actions; the router turns it into the page and the event. */
export class ConsoleRefusal extends Error {
  readonly reason: RefusalReason;
  /** The client id or kid concerned (shown on the page, named in the event as the target). */
  readonly target: string | undefined;
  /** For `invalid_input`: what was wrong, in words safe to show (a validation message, never a secret). */
  readonly detail: string | undefined;
  /** Headers of the page: `Retry-After` of a throttled sign-in, `Connection: close` of a body left unread. */
  readonly headers: Readonly<Record<string, string>>;
  readonly #status: number | undefined;

  /** `status` and `headers`: those of the error refused, when it had its own (a body too large is a 413). */
  constructor(
    reason: RefusalReason,
    options: {
      target?: string | undefined;
      detail?: string | undefined;
      status?: number | undefined;
      headers?: Readonly<Record<string, string>> | undefined;
    } = {},
  ) {
    super(`console action refused: ${reason}`);
    this.name = 'ConsoleRefusal';
    this.reason = reason;
    this.target = options.target;
    this.detail = options.detail;
    this.headers = options.headers ?? {};
    this.#status = options.status;
  }

  /** The HTTP status of the page. */
  get status(): number {
    return this.#status ?? STATUS[this.reason] ?? 400;
  }

  /** The message key of the page's text. */
  get messageKey(): keyof ConsoleMessages {
    return MESSAGES[this.reason];
  }
}
