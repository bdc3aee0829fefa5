/**
 * The one reload for a token signed by a key this instance has not loaded: after an emergency revocation another
 * instance signs at once with a key created then, and this one would otherwise refuse its tokens until its next
 * scheduled refresh. The access-token verifier and the `id_token_hint` check both go through here.
 */
import { isOAuthError } from '../../errors.js';
import { decodeJsonPart } from '../../lib/compact-jwt.js';
import type { KeyRing } from './ring.js';

/**
 * Runs a token check with one reload of the request's key ring (the account's own under `keysPerAccount`) when the
 * token's `kid` is not loaded there; with configured keys there is no ring, and the check runs once.
 *
 * @example
 * const claims = await context.verifyWithKeyReload(token, () => verifyJWT(context.keys, token, options));
 */
export type KeyReloadingVerify = <T>(token: string, verify: () => T | Promise<T>) => Promise<T>;

/**
 * Runs `verify`; when it fails as `invalid_token` for a `kid` that `ring` does not hold, reloads the ring once
 * (rate-limited, {@link KeyRing.refreshForUnknownKid}) and runs it again. Any other failure, a `kid` the ring holds
 * (then the key is not what failed) or a reload already done within the limit throws the first error.
 *
 * @example
 * const claims = await verifyWithReload(ring, token, () => verifyJWT(ring.keys, token, options));
 */
export async function verifyWithReload<T>(ring: KeyRing | undefined, token: string, verify: () => T | Promise<T>): Promise<T> {
  try {
    return await verify();
  } catch (error) {
    const kid = ring !== undefined && isOAuthError(error) && error.code === 'invalid_token' ? kidOf(token) : undefined;
    if (ring === undefined || kid === undefined || ring.keys.byKid.has(kid) || !(await ring.refreshForUnknownKid())) throw error;
    return verify();
  }
}

/** The `kid` of a compact JWS's header, without verifying anything; `undefined` when there is none to read. */
export function kidOf(token: string): string | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0 || dot > 1024) return undefined;
  const kid = decodeJsonPart(token.slice(0, dot))?.kid;
  return typeof kid === 'string' ? kid : undefined;
}
