/**
 * The record a grant starts with when a user's sign-in is redeemed (the code grant, the device grant): its first
 * refresh generation when the app may refresh, and the lifetimes both grants give it. One place, so that the two
 * grants cannot drift apart on what a new grant is.
 */
import type { App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { randomSecret } from '../lib/random-secrets.js';
import { refreshBindingKey } from '../dpop/refresh-binding.js';
import { type GrantRecord, nextRefreshGeneration } from './grant-records.js';

/** What the redeemed sign-in says about the grant; the rest of the record is derived here. */
export type GrantStart = Omit<GrantRecord, 'clientId' | 'changedAt' | 'absoluteExpiresAt' | 'accessUntil' | 'refresh' | 'revokedJtis'>;

/**
 * The new grant `grantId` of `app`, whose first access token expires at `accessExp`, and its first refresh token
 * (`null` when the app is not registered for refresh_token).
 * @example const { grant, refreshToken } = firstGrant(context, app, grantId, dpopJkt, access.exp, { accountId, userId, scope, authTime });
 */
export function firstGrant(
  context: SentinelContext,
  app: App,
  grantId: string,
  dpopJkt: string | undefined,
  accessExp: number,
  start: GrantStart,
): { grant: GrantRecord; refreshToken: string | null } {
  const now = Math.floor(Date.now() / 1000);
  const absoluteExpiresAt = now + context.config.refreshToken.absoluteTtl;
  const refresh = app.grantTypes.includes('refresh_token')
    ? nextRefreshGeneration(context, grantId, { gen: 0, family: randomSecret(), absoluteExpiresAt, jkt: refreshBindingKey(app, dpopJkt) })
    : null;
  // Every member named, absent ones as undefined: one object shape for every grant. A spread of `start` (whose
  // shape varies with its optional members) missed V8's inline caches on every code exchange.
  const grant: GrantRecord = {
    accountId: start.accountId,
    clientId: app.clientId,
    userId: start.userId,
    scope: start.scope,
    authTime: start.authTime,
    amr: start.amr,
    acr: start.acr,
    sid: start.sid,
    changedAt: now,
    absoluteExpiresAt: refresh === null ? accessExp : absoluteExpiresAt,
    accessUntil: accessExp,
    refresh: refresh?.state ?? null,
    resources: start.resources,
    claims: start.claims,
    grantType: start.grantType,
  };
  return { grant, refreshToken: refresh?.token ?? null };
}
