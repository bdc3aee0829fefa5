/**
 * `grant_type=refresh_token` (RFC 6749 §6) with rotation on every use and family revocation on reuse
 * (RFC 9700 §4.14.2).
 */
import { requireGrant, type App } from '../apps.js';
import type { SentinelContext } from '../context.js';
import { OAuthError } from '../errors.js';
import type { SentinelRequest, SentinelResponse } from '../http.js';
import { required, single, type ParamMap } from '../params.js';
import {
  findUsedRefreshToken,
  isGrantRevoked,
  markRefreshTokenUsed,
  parseRefreshRecord,
  refreshKey,
  revokeGrant,
  type RefreshRecord,
} from './grants.js';
import { issueUserTokens } from './user-tokens.js';
import { assertRefreshBinding } from '../dpop/refresh-binding.js';

/**
 * The scope of the new access token: the requested one when it is a subset of the grant's (RFC 6749 §6: it may
 * only narrow), else the grant's.
 */
function narrowScope(grantScope: string | undefined, requested: string | undefined): string | undefined {
  if (requested === undefined) return grantScope;
  const granted = new Set((grantScope ?? '').split(' ').filter((s) => s !== ''));
  const asked = [...new Set(requested.split(' ').filter((s) => s !== ''))];
  const extra = asked.filter((scope) => !granted.has(scope));
  if (extra.length > 0) throw new OAuthError('invalid_scope', 'the requested scope exceeds the scope of the grant');
  return asked.length === 0 ? grantScope : asked.join(' ');
}

async function reuseDetected(
  context: SentinelContext,
  request: SentinelRequest,
  record: { grantId: string; accountId: string; clientId?: string; userId?: string },
): Promise<never> {
  const grant = await revokeGrant(context, record.grantId);
  // A rotated token's record is gone; the grant record still names the user for the audit event.
  const userId = record.userId ?? grant?.userId;
  context.emit({ type: 'refresh.reused', accountId: record.accountId, clientId: record.clientId, userId, ip: request.ip });
  throw new OAuthError('invalid_grant', 'the refresh token has already been used; the grant is revoked');
}

/**
 * Rotates a refresh token: the presented one is taken (atomically, so of concurrent uses exactly one wins) and
 * replaced. Presenting a rotated token — or losing that race, which looks the same to the server — revokes the
 * whole grant. A token of another client is refused and left alone.
 *
 * @example
 * // POST /sentinel/api/account/123/token  grant_type=refresh_token&refresh_token=…
 * return handleRefreshTokenGrant(context, request, accountId, params, app);
 */
export async function handleRefreshTokenGrant(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  params: ParamMap,
  app: App,
  dpopJkt?: string,
): Promise<SentinelResponse> {
  const token = required(params, 'refresh_token');
  const requestedScope = single(params, 'scope');
  requireGrant(app, 'refresh_token');
  const key = refreshKey(token);
  const found = parseRefreshRecord(await context.store.get(key));
  if (found === null) {
    const usedGrant = await findUsedRefreshToken(context, token);
    if (usedGrant !== null) await reuseDetected(context, request, { grantId: usedGrant, accountId, clientId: app.clientId });
    throw new OAuthError('invalid_grant', 'the refresh token is invalid or has expired');
  }
  if (found.accountId !== accountId || found.clientId !== app.clientId) {
    throw new OAuthError('invalid_grant', 'the refresh token was not issued to this client');
  }
  // Checked before the take: of concurrent uses, the one that wins the take must not be failed afterwards.
  if (await isGrantRevoked(context, found.grantId)) throw new OAuthError('invalid_grant', 'the grant has been revoked');
  const scope = narrowScope(found.scope, requestedScope);
  assertRefreshBinding(found, dpopJkt);
  const record: RefreshRecord | null = parseRefreshRecord(await context.store.take(key));
  if (record === null) return reuseDetected(context, request, found);
  await markRefreshTokenUsed(context, token, record);
  const now = Math.floor(Date.now() / 1000);
  if (record.expiresAt <= now || record.absoluteExpiresAt <= now) {
    throw new OAuthError('invalid_grant', 'the refresh token has expired');
  }
  return issueUserTokens(context, {
    grantType: 'refresh_token',
    accountId,
    clientId: app.clientId,
    userId: record.userId,
    grantId: record.grantId,
    authTime: record.authTime,
    scope,
    refresh: { scope: record.scope, absoluteExpiresAt: record.absoluteExpiresAt, ...(record.jkt === undefined ? {} : { jkt: record.jkt }) },
    idToken: null,
    dpopJkt,
    ip: request.ip,
  });
}
