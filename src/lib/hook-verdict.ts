/**
 * The answer of a host's yes/no hook (`consumerId`, `authorizeDelegation`). Only `true` and `false` are answers:
 * anything else (`'false'`, `{ allowed: false }`, `undefined` from a forgotten `return`) is a bug of the hook, and
 * taken as truthy it would let through what the host meant to refuse. It fails the request closed instead, as a
 * throwing hook does: `500 server_error`, the TypeError naming the hook reported to `onError`, nothing issued.
 */

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
