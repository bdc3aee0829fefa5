/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3) with PKCE (RFC 7636) and code-replay revocation
 * (RFC 6749 §4.1.2, RFC 9700 §4.5).
 */
import { FAPI2_CODE_TTL_SECONDS, isFapi2 } from '../assurance/fapi2.js';
import { requireGrant, type App } from '../apps/app.js';
import { codeKeyOf, grantIdForCode, parseCodeRecord } from './code-records.js';
import type { SentinelContext } from '../http/context.js';
import { committedRefusal, OAuthError } from '../errors.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { required, single, type ParamMap } from '../http/params.js';
import { type GrantRecord, grantIndexUntil, grantKey, grantTtlMs, readGrant, revokeGrant } from './grant-records.js';
import { encodeGrant } from './grant-encoding.js';
import { wasRefreshed } from './refreshed-mark.js';
import { appIdTokenAlg, hasOpenIDScope } from './id-token.js';
import { readAmr } from '../assurance/levels.js';
import { assertVerifierSyntax, verifyPKCE } from './pkce.js';
import { type CommitGrant, issueUserTokens } from './user-tokens.js';
import { firstGrant, type GrantStart } from './first-grant.js';
import { invalidProof } from '../dpop/proof.js';
import { attachGrant } from '../sessions/session-index.js';
import type { PendingProof } from '../dpop/token-binding.js';
import { tokenResources } from './resource-indicators.js';
import { claimsWithinAppScope, storedRequestedClaims } from './requested-claims.js';
import { withinAppScope } from './scope-tokens.js';
import { type CommittedGrant, undoCommit } from './undo-commit.js';

/**
 * A code that is no longer there to spend. If its grant exists, the code was redeemed: moments ago (within
 * `retryGrace`, before any refresh) that may be the same client retrying after a lost answer, so it is refused and
 * nothing else happens; later it is a replay that revokes the tokens issued from it (RFC 6749 §4.1.2, §10.5). A
 * spent code presented by another client changes nothing, as an unspent one does.
 */
async function spentCode(
  context: SentinelContext,
  _request: SentinelRequest,
  accountId: string,
  app: App,
  grantId: string,
): Promise<never> {
  const found = await readGrant(context, grantId);
  if (found === null) throw new OAuthError('invalid_grant', 'the code is invalid or has expired');
  const { grant } = found;
  // Only the client the code was issued to can replay it into a revocation. Anyone else holding a spent code (from a
  // browser's history, a log, a Referer) could otherwise end the user's grant from any account with a public
  // client, and learn that the code was real: to them it is just not a code.
  if (grant.accountId !== accountId || grant.clientId !== app.clientId) {
    throw new OAuthError('invalid_grant', 'the code is invalid or has expired');
  }
  // A refresh token that does not rotate (fapi2) stays at generation 0: its use is marked apart (refreshed-mark.ts).
  const untouched = grant.refresh === null || grant.refresh.gen === 0;
  const withinGrace = Math.floor(Date.now() / 1000) < grant.changedAt + context.config.retryGrace;
  if (untouched && withinGrace && !(grant.refresh !== null && (await wasRefreshed(context, grantId)))) {
    throw new OAuthError('invalid_grant', 'the code has already been used');
  }
  await revokeGrant(context, grantId);
  // Committed: the grant is gone whatever the hook says, so a throwing onEvent must not turn the refusal into a 500
  // that invites a retry (the retry would only meet a code that names nothing), neither here nor at its token.denied.
  context.emit({ type: 'code.replayed', accountId, clientId: app.clientId, userId: grant.userId }, 'committed');
  throw committedRefusal(new OAuthError('invalid_grant', 'the code has already been used; the tokens issued from it are revoked'));
}

/**
 * Puts a new grant in its session's index entry, so that ending the session ends the grant. A session that ended
 * since the code was issued takes the grant with it at once: its tokens were signed but are never sent, and the code
 * stays spent. A failure to attach it (the store, or ending the grants the session drops past
 * `session.maxGrantsPerApp` or `session.maxAppsPerSession`) takes the whole commit back (undo-commit.ts): the grant
 * goes and the code is put back, so the exchange fails with server_error and the client's retry redeems the code;
 * the grant is never left alive where ending the session would miss it.
 */
async function joinSession(context: SentinelContext, grant: GrantRecord, committed: CommittedGrant, sid: string): Promise<void> {
  const { grantId } = committed;
  const until = grantIndexUntil(context, grant);
  const { maxGrantsPerApp, maxAppsPerSession } = context.config.session;
  const { accountId, userId, clientId } = grant;
  const input = { accountId, userId, sid, clientId, grantId, until, maxGrantsPerApp, maxAppsPerSession };
  let attached: boolean;
  try {
    attached = await attachGrant(context, input);
  } catch (error) {
    return undoCommit(context, committed, error);
  }
  if (attached) return;
  await revokeGrant(context, grantId);
  throw committedRefusal(new OAuthError('invalid_grant', 'the code is invalid: the session it was issued in has ended'));
}

/**
 * Exchanges a code for tokens. Everything is checked before the code is spent — parameters, client, grant type,
 * the code's client and redirect URI, PKCE — so a code presented by the wrong client or with the wrong redirect_uri
 * stays intact for its rightful client. Then one atomic swap deletes the code and creates its grant: either both
 * happen or neither does; and a grant that then fails to join its session's index because the store failed is
 * taken back with the code restored, so a failed exchange can simply be retried.
 *
 * @example
 * // POST /sentinel/api/account/123/token  grant_type=authorization_code&code=…&redirect_uri=…&code_verifier=…
 * return handleAuthorizationCodeGrant(context, request, accountId, params, app, dpop);
 */
export async function handleAuthorizationCodeGrant(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  params: ParamMap,
  app: App,
  dpop?: PendingProof,
): Promise<SentinelResponse> {
  const dpopJkt = dpop?.jkt;
  const code = required(params, 'code');
  const redirectUri = single(params, 'redirect_uri');
  const verifier = single(params, 'code_verifier');
  assertVerifierSyntax(verifier);
  requireGrant(app, 'authorization_code');
  const grantId = grantIdForCode(code);
  const key = codeKeyOf(grantId);
  const stored = await context.store.get(key);
  if (stored === null) return spentCode(context, request, accountId, app, grantId);
  const record = parseCodeRecord(stored);
  // A value under a code key that is not a code record is store corruption: fail, never guess.
  if (record === null) throw new Error('the stored code record is unreadable');
  // Left intact for its own client, and answered as a made-up code: to another client (which may be anyone who knows
  // a public client's id) a refusal naming the reason would confirm that a code it found is genuine and unspent.
  if (record.accountId !== accountId || record.clientId !== app.clientId) {
    throw new OAuthError('invalid_grant', 'the code is invalid or has expired');
  }
  // FAPI 2.0 Security Profile §5.3.2.1: a code older than 60 s is refused by its age, not only by the store's TTL.
  if (isFapi2(app) && !(Math.floor(Date.now() / 1000) - record.issuedAt <= FAPI2_CODE_TTL_SECONDS)) {
    throw new OAuthError('invalid_grant', 'the code has expired');
  }
  if (record.redirectUriInRequest && redirectUri === undefined) {
    throw new OAuthError('invalid_grant', 'redirect_uri is required: the authorization request carried it');
  }
  if (redirectUri !== undefined && redirectUri !== record.redirectUri) {
    throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request');
  }
  // Public clients have no secret: PKCE is what ties the code to the client that asked for it. FAPI 2.0 Security
  // Profile §5.3.2.2 requires it of a fapi2 app whatever its method: judged by the app as it is now, as the code's age
  // is, so a code issued without a challenge before a registry made the app fapi2 is refused, not redeemed.
  const pkceRequired = context.config.pkce === 'required' || app.tokenEndpointAuthMethod === 'none' || isFapi2(app);
  verifyPKCE(record.codeChallenge, verifier, { required: pkceRequired });
  // RFC 8707 §2.2: only resources the authorization named, checked before the code is spent.
  const resources = tokenResources(context, app, params, record.resources ?? []);
  // RFC 9449 §10: a code requested with dpop_jkt goes only to the holder of that key (checked before it is spent).
  if (record.dpopJkt !== undefined && record.dpopJkt !== dpopJkt) {
    throw invalidProof('the code is bound to another DPoP key (dpop_jkt of the authorization request)');
  }
  // The proof's jti is spent only now that the code has proved good for this client: a made-up code with a fresh
  // proof (a public client needs nothing else) leaves no security state behind. A replayed proof leaves the code.
  if (dpop !== undefined) await dpop.remember();
  // A stored record is not trusted to name a method the service does not know: such an amr is dropped.
  const amr = readAmr(record.amr);
  // Checked like the amr: a stored record is not trusted to name claims a request could not ask for. Scope and claims
  // are narrowed to the app's scope as it is now, as a refresh narrows them: an operator may have narrowed it while
  // the interaction or the code was pending, and the first tokens (and the grant) must not carry what it lost.
  const claims = claimsWithinAppScope(record.claims === undefined ? undefined : storedRequestedClaims(record.claims), app);
  const scope = withinAppScope(record.scope, app);
  const input = {
    grantType: 'authorization_code',
    accountId,
    clientId: app.clientId,
    userId: record.userId,
    grantId,
    authTime: record.authTime,
    amr,
    acr: record.acr,
    sid: record.sid,
    scope,
    idToken: hasOpenIDScope(scope) ? { nonce: record.nonce, alg: appIdTokenAlg(context, app) } : null,
    ip: request.ip,
    dpopJkt,
    resources,
    claims,
  } as const;
  const commit: CommitGrant = async (access) => {
    const start: GrantStart = {
      accountId,
      userId: record.userId,
      scope,
      authTime: record.authTime,
      amr,
      acr: record.acr,
      sid: record.sid,
      resources: record.resources,
      claims,
    };
    const { grant, refreshToken } = firstGrant(context, app, grantId, dpopJkt, access.exp, start);
    const written = encodeGrant(grant);
    const applied = await context.store.swap([
      { key, expect: stored, value: null },
      { key: grantKey(grantId), expect: null, value: written, ttlMs: grantTtlMs(context, grant) },
    ]);
    // Lost the race to a concurrent presentation of the same code: from here it is a spent code.
    if (!applied) return spentCode(context, request, accountId, app, grantId);
    if (record.sid !== undefined) {
      // Put back for as long as the code had left at most (its own TTL may have been shorter: FAPI 2.0's age check
      // above still refuses it by its issuedAt).
      const ttlMs = Math.max(1, (record.issuedAt + context.config.codeTtl) * 1000 - Date.now());
      const credential = { key, now: null, before: stored, ttlMs };
      await joinSession(context, grant, { grantId, written, credential }, record.sid);
    }
    return refreshToken;
  };
  // For a user who is gone: spent only if still unspent. An exchange that took it first made a grant, which
  // issueUserTokens then revokes.
  const spend = async (): Promise<void> => {
    await context.store.swap([{ key, expect: stored, value: null }]);
  };
  return issueUserTokens(context, input, commit, spend);
}
