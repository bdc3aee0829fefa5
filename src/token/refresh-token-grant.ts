/**
 * `grant_type=refresh_token` (RFC 6749 §6) with rotation on every use and family revocation on reuse
 * (RFC 9700 §4.14.2).
 */
import { isFapi2 } from '../assurance/fapi2.js';
import { markRefreshed } from './refreshed-mark.js';
import { requireGrant, type App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { committedRefusal, OAuthError, retryShortly } from '../errors.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { required, single, type ParamMap } from '../http/params.js';
import {
  type GrantRecord,
  type GrantRefreshState,
  grantKey,
  grantTtlMs,
  nextRefreshGeneration,
  type PresentedRefreshToken,
  parseRefreshToken,
  readGrant,
  refreshStanding,
  revokeGrant,
  type StoredGrant,
} from './grant-records.js';
import { encodeGrant } from './grant-encoding.js';
import { appIdTokenAlg, hasOpenIDScope } from './id-token.js';
import { readAmr } from '../assurance/levels.js';
import { issueUserTokens } from './user-tokens.js';
import { claimsWithinAppScope } from './requested-claims.js';
import { withinAppScope } from './scope-tokens.js';
import { assertRefreshBinding, refreshBindingKey } from '../dpop/refresh-binding.js';
import type { PendingProof } from '../dpop/token-binding.js';
import { tokenResources } from './resource-indicators.js';

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
  _request: SentinelRequest,
  accountId: string,
  clientId: string,
  grantId: string,
): Promise<never> {
  const grant = await revokeGrant(context, grantId);
  // Committed: the family is revoked whatever the hook says; the client must hear invalid_grant, not a 500 (its
  // token.denied included).
  context.emit({ type: 'refresh.reused', accountId, clientId, userId: grant?.userId }, 'committed');
  throw committedRefusal(new OAuthError('invalid_grant', 'the refresh token has already been used; the grant is revoked'));
}

/**
 * Reads the grant of a presented token and decides what the token is. Throws for every token that must not be
 * rotated; returns the grant (as read, for the swap to expect) when it is the current one.
 */
async function currentGrant(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  app: App,
  presented: PresentedRefreshToken,
  dpopJkt: string | undefined,
): Promise<StoredGrant> {
  const found = await readGrant(context, presented.grantId);
  // A grant the store does not have is over: expired, revoked, or lost with the store's data. Never live.
  if (found === null) throw new OAuthError('invalid_grant', 'the refresh token is invalid or has expired');
  const standing = refreshStanding(context, found.grant, presented);
  if (standing.kind === 'invalid') throw new OAuthError('invalid_grant', 'the refresh token is invalid or has expired');
  // Answered as an unknown token (and left alone): to another client, a refusal naming the reason would confirm that
  // a token it holds is genuine and live, the oracle revocation and introspection do not offer either.
  if (found.grant.accountId !== accountId || found.grant.clientId !== app.clientId) {
    throw new OAuthError('invalid_grant', 'the refresh token is invalid or has expired');
  }
  // A genuine token of an older generation is reuse (RFC 9700 §4.14.2) whatever proof comes with it. The grant's key
  // may be newer than that token: a public client's refresh token is bound at the first proof (RFC 9449 §5), so
  // whoever refreshed an unbound copy first with a key of their own (a thief) bound the grant to it. Checking that
  // key first would refuse the client's own rotated-away token for its proof and never revoke the thief's family.
  if (standing.kind === 'reused') return reuseDetected(context, request, accountId, app.clientId, presented.grantId);
  // RFC 9449 §5: a current (or just rotated) bound refresh token is checked before anything else happens to it, so a
  // thief without the key can neither rotate it nor burn it.
  assertRefreshBinding(found.grant.refresh ?? {}, dpopJkt);
  if (standing.kind === 'just-rotated') {
    // Possibly the same client retrying after a lost answer (or a concurrent duplicate): refused, not punished.
    throw new OAuthError('invalid_grant', 'the refresh token has just been rotated; use the newest one');
  }
  if (standing.kind === 'expired') throw new OAuthError('invalid_grant', 'the refresh token has expired');
  return found;
}

/** The refresh state of a grant used without rotation: the same token, its idle expiry moved on; `null` when past. */
function keptRefreshState(context: SentinelContext, grant: GrantRecord): GrantRefreshState | null {
  const now = Math.floor(Date.now() / 1000);
  const { refresh } = grant;
  if (refresh === null || grant.absoluteExpiresAt <= now) return null;
  return { ...refresh, expiresAt: Math.min(now + context.config.refreshToken.idleTtl, grant.absoluteExpiresAt) };
}

/**
 * Rotates a refresh token: one atomic swap moves the grant from the presented generation to the next, so either
 * the old token is spent *and* the new one is live, or nothing changed and a retry succeeds. Presenting an older
 * generation revokes the whole grant (RFC 9700 §4.14.2), except the one just rotated within `retryGrace`, which is
 * only refused. A token of another client is refused and left alone.
 *
 * @example
 * // POST /sentinel/api/account/123/token  grant_type=refresh_token&refresh_token=…
 * return handleRefreshTokenGrant(context, request, accountId, params, app, dpop);
 */
export async function handleRefreshTokenGrant(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  params: ParamMap,
  app: App,
  dpop?: PendingProof,
): Promise<SentinelResponse> {
  const dpopJkt = dpop?.jkt;
  const token = required(params, 'refresh_token');
  const requestedScope = single(params, 'scope');
  requireGrant(app, 'refresh_token');
  const presented = parseRefreshToken(token);
  if (presented === null) throw new OAuthError('invalid_grant', 'the refresh token is invalid or has expired');
  let found = await currentGrant(context, request, accountId, app, presented, dpopJkt);
  const scope = narrowScope(withinAppScope(found.grant.scope, app), requestedScope);
  // RFC 8707 §2.2: a refreshed token may be for the grant's resources only (any of them, or all by default).
  const resources = tokenResources(context, app, params, found.grant.resources ?? []);
  // Spent only once the refresh token has proved current for this client and key (see the code grant).
  if (dpop !== undefined) await dpop.remember();
  const { grant } = found;
  const input = {
    grantType: 'refresh_token',
    grantedBy: grant.grantType,
    accountId,
    clientId: app.clientId,
    userId: grant.userId,
    grantId: presented.grantId,
    authTime: grant.authTime,
    amr: readAmr(grant.amr),
    acr: grant.acr,
    sid: grant.sid,
    scope,
    // OpenID Connect Core §12.2: a refreshed ID token keeps sub, aud and auth_time, and carries no nonce.
    idToken: hasOpenIDScope(scope) ? { alg: appIdTokenAlg(context, app) } : null,
    ip: request.ip,
    dpopJkt,
    resources,
    // OpenID Connect Core §5.5: the claims asked for by name stay asked for, in each token the grant issues, within
    // the app's scope as it is now (as the grant's scope is narrowed to it above).
    claims: claimsWithinAppScope(grant.claims, app),
  } as const;
  return issueUserTokens(context, input, async (access) => {
    // A swap fails when the grant changed since it was read: a concurrent rotation or revocation (then the next
    // read says what the token has become), or an access-token revocation (then the token is still current).
    for (let attempt = 0; attempt < 5; attempt++) {
      if (isFapi2(app)) {
        // FAPI 2.0 Security Profile §5.3.2.1: the refresh token is not rotated (the client keeps the one it has);
        // the use extends its idle life within the absolute one.
        const kept = keptRefreshState(context, found.grant);
        if (kept === null) throw new OAuthError('invalid_grant', 'the refresh token has expired');
        // The generation stays 0: the code's replay check learns of this use from the mark (refreshed-mark.ts).
        await markRefreshed(context, presented.grantId, found.grant);
        const used: GrantRecord = { ...found.grant, accessUntil: Math.max(found.grant.accessUntil, access.exp), refresh: kept };
        const applied = await context.store.swap([
          { key: grantKey(presented.grantId), expect: found.raw, value: encodeGrant(used), ttlMs: grantTtlMs(context, used) },
        ]);
        if (applied) return token;
        found = await currentGrant(context, request, accountId, app, presented, dpopJkt);
        continue;
      }
      const next = nextRefreshGeneration(context, presented.grantId, {
        gen: presented.gen + 1,
        family: presented.family,
        // currentGrant matched the presented family against this digest.
        familyDigest: found.grant.refresh?.family,
        absoluteExpiresAt: found.grant.absoluteExpiresAt,
        // RFC 9449 §5: a public client's refresh token is bound to the key of its first proof, even when the code
        // was redeemed without one; once bound it stays bound to that key.
        jkt: found.grant.refresh?.jkt ?? refreshBindingKey(app, dpopJkt),
      });
      if (next === null) throw new OAuthError('invalid_grant', 'the refresh token has expired');
      const rotated: GrantRecord = {
        ...found.grant,
        changedAt: next.state.issuedAt,
        accessUntil: Math.max(found.grant.accessUntil, access.exp),
        refresh: next.state,
      };
      const applied = await context.store.swap([
        { key: grantKey(presented.grantId), expect: found.raw, value: encodeGrant(rotated), ttlMs: grantTtlMs(context, rotated) },
      ]);
      if (applied) return next.token;
      found = await currentGrant(context, request, accountId, app, presented, dpopJkt);
    }
    throw rotationBusy();
  });
}

/**
 * The answer when every swap of a rotation lost to another writer of the grant that left the presented token current:
 * the client's own concurrent requests (revoking the grant's access tokens, or a FAPI 2.0 client's parallel uses of
 * its unrotated token). That is contention, not a fault of the service, so it is not a 500 reported to `onError`; and
 * the token is still good, so it must not be `invalid_grant` either, which tells a client to drop it. A 503 with
 * `Retry-After` is HTTP's own "try again", which generic clients honour, in the RFC 6749 §5.2 JSON shape, with the
 * code OAuth defines for that meaning (RFC 6749 §4.1.2.1; RFC 7009 §2.2.1 answers 503 at the revocation endpoint).
 * Nothing was spent: the retry presents the same token.
 */
function rotationBusy(): OAuthError {
  return retryShortly('the grant was changing while the refresh token was used; retry shortly');
}
