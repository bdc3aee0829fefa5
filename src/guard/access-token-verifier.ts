/**
 * `sentinel.verifyAccessToken()`: the signature and claims check of `access-token-jwt.ts`, plus what only the running
 * service knows: whether the token's grant was revoked, whether its app still exists, and which key ring (shared or
 * the account's own) holds its key.
 */
import type { AccessTokenClaims } from '../token/access-token.js';
import { verifyAccessTokenJWT } from './access-token-jwt.js';
import type { SentinelContext } from '../http/context.js';
import { accountOfToken } from '../keys/keyring/per-account.js';
import type { KeyRing } from '../keys/keyring/ring.js';
import type { ServiceKeys } from '../keys/keyring/service-keys.js';
import { verifyWithReload } from '../keys/keyring/unknown-kid.js';
import { createLivenessCheck } from './token-liveness.js';
import type { AccessTokenVerifier, ServiceVerifyOptions } from './verifier-contract.js';

export type { AccessTokenVerifier } from './verifier-contract.js';

/** Builds the service's access-token verifier over its context and keys. */
export function createAccessTokenVerifier(context: SentinelContext, serviceKeys: ServiceKeys): AccessTokenVerifier {
  const { ring, accountRings } = serviceKeys;
  // User tokens (with a grant id) and delegated tokens are checked against revocations; the other consumer-bound
  // tokens stay store-free.
  // Tokens of a deleted app fail the guard too (within the presence cache's TTL, at once on this instance).
  const isRevoked = createLivenessCheck(context);
  const issuerPrefix = context.accountIssuer('');

  // A presentation (guard, UserInfo, the host) must be live and carry its proof; a lookup by the token's own client
  // (introspection, revocation, a delegation's subject) skips the binding and checks liveness only when asked: the
  // grant, and the apps (a delegated token's actor is alive while the app it was delegated from may be gone). Both go through the same
  // key-ring choice and unknown-kid reload below, so every instance finds a token another one just signed.
  function verify(token: string, options: ServiceVerifyOptions): Promise<AccessTokenClaims> {
    const { lookup } = options;
    if (lookup === undefined) return verifyAccessTokenJWT(context, token, options, isRevoked);
    return verifyAccessTokenJWT(context, token, options, lookup.checkRevocation ? isRevoked : undefined, false);
  }

  async function verifyWithRing(target: KeyRing, token: string, verifyOptions: ServiceVerifyOptions): Promise<AccessTokenClaims> {
    const keysLoaded = target.fresh();
    if (keysLoaded !== undefined) await keysLoaded;
    return verifyWithReload(target, token, () => verify(token, verifyOptions));
  }

  return async (token, verifyOptions = {}) => {
    if (ring === undefined) return verify(token, verifyOptions);
    if (accountRings !== undefined) {
      const accountId = verifyOptions.accountId ?? accountOfToken(token, issuerPrefix);
      if (accountId !== undefined && (await context.apps.hasAccount(accountId))) {
        const target = accountRings.ring(accountId);
        return accountRings.run(target, () => verifyWithRing(target, token, verifyOptions));
      }
    }
    return verifyWithRing(ring, token, verifyOptions);
  };
}
