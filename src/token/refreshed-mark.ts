/**
 * The mark a refresh leaves on a grant whose refresh token does not rotate (`profile: 'fapi2'`), for the code
 * replay check of authorization-code-grant.ts. A code presented again within `retryGrace` of its redemption is only
 * refused while it may be the client retrying after a lost answer; once the grant's refresh token has been used, the
 * client had that answer, and the code is a replay that revokes the grant (RFC 6749 §4.1.2). A rotating grant says
 * so by its generation; a non-rotating one stays at generation 0, so its first refresh within the grace writes
 * `grant-refreshed:{gid}` for the rest of it. A key apart from the grant, not a field of it: an instance of an
 * earlier version neither writes nor reads it and keeps refusing (never misreading a grant), and outside the grace
 * nothing is written or read.
 */
import type { SentinelContext } from '../http/context.js';
import type { GrantRecord } from './grant-records.js';

function refreshedKey(grantId: string): string {
  return `grant-refreshed:{${grantId}}`;
}

/** Milliseconds left of the grant's replay grace (`retryGrace` after the code's redemption); 0 once it is over. */
function graceLeftMs(context: SentinelContext, grant: GrantRecord): number {
  return Math.max(0, (grant.changedAt + context.config.retryGrace) * 1000 - Date.now());
}

/**
 * Notes that the grant's (non-rotating) refresh token was used, while the code's replay grace lasts; nothing after.
 * Written before the refresh's tokens go out: a store failure fails the refresh (500, nothing issued).
 *
 * @example await markRefreshed(context, grantId, found.grant);
 */
export async function markRefreshed(context: SentinelContext, grantId: string, grant: GrantRecord): Promise<void> {
  const ttlMs = graceLeftMs(context, grant);
  if (ttlMs > 0) await context.store.set(refreshedKey(grantId), '1', ttlMs);
}

/**
 * Whether the grant's refresh token was used since the code was redeemed (as {@link markRefreshed} noted it).
 *
 * @example if (await wasRefreshed(context, grantId)) await revokeGrant(context, grantId);
 */
export async function wasRefreshed(context: SentinelContext, grantId: string): Promise<boolean> {
  return (await context.store.get(refreshedKey(grantId))) !== null;
}
