/**
 * Whether a verified access token is still live: its grant not revoked (user tokens) and its app still known to the
 * app store. Every place that accepts an access token as a presentation — the bearer guard, `verifyAccessToken()`
 * and UserInfo — asks this one check, so a deleted or disabled app's tokens stop everywhere at the same moment
 * (at once on the instance that deleted it, within the presence cache's TTL elsewhere; see app-presence.ts).
 */
import { type AccessTokenClaims, actorsOf } from '../token/access-token-claims.js';
import type { RevocationCheck } from './access-token-jwt.js';
import { appPresence } from './app-presence.js';
import type { SentinelContext } from '../http/context.js';
import { createRevocationCheck } from '../token/grant-records.js';

/**
 * The revocation check a presented access token must pass: true (refuse) when its grant is revoked or its app is
 * gone (deleted, or disabled in a registry that can disable apps, whose `findApp` then answers `null`). A delegated
 * token (RFC 8693) also stops with the app it was delegated from and with every actor of its `act` chain: a bot
 * deleted midway must take with it what it passed on, as it takes its own token. Each app is asked through the
 * presence cache, so a chain of three costs no store read while its apps are known present.
 *
 * @example const claims = await verifyAccessTokenJWT(context, token, { accountId }, createLivenessCheck(context));
 */
export function createLivenessCheck(context: SentinelContext): RevocationCheck {
  const isGrantRevoked = createRevocationCheck(context);
  const presence = appPresence(context);
  const issuerPrefix = context.accountIssuer('');
  return async (claims: AccessTokenClaims): Promise<boolean> => {
    if (await isGrantRevoked(claims)) return true;
    const accountId = decodeURIComponent(claims.iss.slice(issuerPrefix.length));
    if (await presence.isGone(accountId, claims.client_id)) return true;
    // A delegated token (RFC 8693) also stops with the app whose token it was delegated from,
    const origin = claims.grant_client_id;
    if (origin !== undefined && origin !== claims.client_id && (await presence.isGone(accountId, origin))) return true;
    if (claims.act === undefined) return false;
    // and with each earlier actor (the nearest is the token's own client, asked above): at most three in all.
    for (const actor of actorsOf(claims.act)) {
      if (actor !== claims.client_id && actor !== origin && (await presence.isGone(accountId, actor))) return true;
    }
    return false;
  };
}
