/**
 * The answer of a host's yes/no hook (`consumerId`, `authorizeDelegation`). Only `true` and `false` are answers:
 * anything else (`'false'`, `{ allowed: false }`, `undefined` from a forgotten `return`) is a bug of the hook, and
 * taken as truthy it would let through what the host meant to refuse. It fails the request closed instead, as a
 * throwing hook does: `500 server_error`, the TypeError naming the hook reported to `onError`, nothing issued.
 */
import { isOAuthError, OAuthError } from '../errors.js';

/**
 * `answer` when it is a boolean; throws a TypeError naming `hook` otherwise.
 *
 * @example
 * if (!hookVerdict(await validator(consumerId, { accountId, clientId }), 'consumerId')) throw refuse('…');
 */
export function hookVerdict(answer: unknown, hook: string): boolean {
  if (typeof answer === 'boolean') return answer;
  throw new TypeError(`sentinel-idp: ${hook}() must return true or false, not ${answer === null ? 'null' : typeof answer}`);
}

/**
 * Asks the yes/no hook `hook` (its `call`) and answers its {@link hookVerdict}. A hook that fails is the host's fault,
 * never the client's: a `500` whatever it threw. An OAuthError among its throws (the service's own verifier, called
 * inside the hook, refusing a token) would otherwise reach the client as is, a 401 `invalid_token` or
 * `invalid_client` for a good request, and never reach `onError`; it goes there as the cause of a `server_error`.
 *
 * @example
 * if (!(await askHook('consumerId', () => validator(consumerId, { accountId, clientId })))) throw refuse('…');
 */
export async function askHook(hook: string, call: () => unknown): Promise<boolean> {
  let answer: unknown;
  try {
    answer = await call();
  } catch (error) {
    if (isOAuthError(error)) throw new OAuthError('server_error', `${hook}() failed`, { cause: error });
    throw error;
  }
  return hookVerdict(answer, hook);
}
