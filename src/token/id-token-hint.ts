/**
 * `id_token_hint` (OpenID Connect Core §3.1.2.1, RP-Initiated Logout §2): an ID token this service issued, handed
 * back by the app to name the user it believes is signed in.
 */
import type { SentinelContext } from '../http/context.js';
import { isOAuthError } from '../errors.js';
import { verifyJWT } from '../keys/jws.js';
import { decodeJsonPart } from '../lib/compact-jwt.js';

/** What a valid hint tells. */
export interface IDTokenHint {
  /** The user the ID token was issued for. */
  sub: string;
  /** The clients it was issued to (`aud`). */
  audiences: string[];
  /** When that user authenticated, if the token says. */
  authTime?: number | undefined;
  /** The session the ID token was issued through (`sid`), if the token says. */
  sid?: string | undefined;
}

/**
 * Verifies a hint: signed by one of the service's keys as an ID token (`typ: JWT`) of the account's issuer.
 * Expiry is deliberately not checked: apps send the last ID token they have, typically long expired, and
 * OpenID Connect Core §3.1.2.1 asks only that the OP issued it. `null` for anything else.
 *
 * A hint signed by a key this instance has not loaded yet reloads the key ring once: right after an emergency
 * revocation another instance signs ID tokens with a new key, and the user must still be able to sign out here.
 *
 * @example
 * const hint = await verifyIDTokenHint(context, single(params, 'id_token_hint'), accountId);
 */
export async function verifyIDTokenHint(context: SentinelContext, token: string, accountId: string): Promise<IDTokenHint | null> {
  const issuer = context.accountIssuer(accountId);
  try {
    // Only the expiry is skipped: nbf and iat are still checked against the clock (a hint from the future is forged).
    const claims = await context.verifyWithKeyReload(token, () =>
      verifyJWT(context.keys, token, { typ: 'JWT', issuer: (iss) => iss === issuer, ignoreExpiry: true }),
    );
    const audiences = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
    if (typeof claims.sub !== 'string' || audiences.length === 0 || audiences.some((aud) => typeof aud !== 'string')) return null;
    return {
      sub: claims.sub,
      audiences,
      authTime: typeof claims.auth_time === 'number' ? claims.auth_time : undefined,
      sid: typeof claims.sid === 'string' ? claims.sid : undefined,
    };
  } catch (error) {
    if (isOAuthError(error)) return null;
    throw error;
  }
}

/**
 * Whether a hint that failed {@link verifyIDTokenHint} names a signing key the service does not hold (after the
 * reload that verification already tried): a key revoked since (an emergency revocation erases it from the ring),
 * or one that was never the service's. Nothing in such a token can be verified, so nothing in it may be used; but
 * it says no more than a request without a hint, which RP-initiated logout answers with the confirmation page.
 *
 * @example if (hint === null && signedByUnknownKey(context, token)) answerAsWithoutHint();
 */
export function signedByUnknownKey(context: SentinelContext, token: string): boolean {
  const [headerPart, , , extra] = token.split('.');
  if (headerPart === undefined || extra !== undefined) return false;
  const header = decodeJsonPart(headerPart);
  return typeof header?.kid === 'string' && !context.keys.byKid.has(header.kid);
}
