/**
 * `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4, §3.5): the device polls with its device
 * code until the person approves or denies, or the code expires. Tokens are issued exactly as for an authorization
 * code (`token/user-tokens.ts`): one swap spends the device authorization and creates the grant, which then takes
 * its place in the user's session index entry written at the approval, only while that entry is still there
 * (`device-session.ts`).
 */
import { DEVICE_CODE_GRANT, requireGrant, type App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { required, type ParamMap } from '../http/params.js';
import { grantKey, grantTtlMs } from '../token/grant-records.js';
import { encodeGrant } from '../token/grant-encoding.js';
import { firstGrant } from '../token/first-grant.js';
import { appIdTokenAlg, hasOpenIDScope } from '../token/id-token.js';
import { type CommitGrant, issueUserTokens } from '../token/user-tokens.js';
import { withinAppScope } from '../token/scope-tokens.js';
import { tokenResources } from '../token/resource-indicators.js';
import { readAmr } from '../assurance/levels.js';
import type { PendingProof } from '../dpop/token-binding.js';
import { type StoredDevice, deviceGrantId, deviceKey, readDevice, replaceDevice, retainMs } from './device-records.js';
import { attachDeviceGrant, deviceSid } from './device-session.js';

/** RFC 8628 §3.5: each `slow_down` adds five seconds to the interval, for the rest of the authorization. */
const SLOW_DOWN_STEP = 5;

function slowDown(): OAuthError {
  return new OAuthError('slow_down', 'polling too fast: wait the interval, now 5 seconds longer, between requests');
}

function usedOrUnknown(): OAuthError {
  return new OAuthError('invalid_grant', 'the device code is invalid or has already been used');
}

/**
 * How often a poll that lost its note to another request reads the record again. Each loss is another request's
 * write, so a burst of polls all get their note in within as many tries as there are polls; past this bound a poll
 * is answered `slow_down` without its own note (the winners' notes have grown the interval already).
 */
const POLL_NOTE_TRIES = 8;

/** How much earlier than its interval a poll may come and still not be `slow_down`: the clocks of instances differ. */
const POLL_SLACK_SECONDS = 1;

/**
 * A poll of an authorization the person has not decided yet: too soon after the previous one, the interval grows and
 * the answer is `slow_down`; otherwise the poll's time is noted and the answer is `authorization_pending`. The note is
 * a swap. A poll that loses it to another poll reads the record again and tries again: it now sees the winner's time,
 * so it is too soon and grows the interval, as RFC 8628 §3.5 asks of every `slow_down`. Without the retry a device
 * sending its polls in bursts would hear `slow_down` for all but one of each burst and never be slowed down.
 */
async function pendingPoll(context: SentinelContext, first: StoredDevice, nowMs: number): Promise<never> {
  let found: StoredDevice | null = first;
  for (let attempt = 0; attempt < POLL_NOTE_TRIES && found !== null; attempt += 1) {
    const { record } = found;
    // The decision, or the expiry, came in between: this poll was too soon for the one that sees it (as before).
    if (record.status !== 'pending' || record.expiresAt * 1000 <= nowMs) break;
    // The previous poll may have been noted by another instance, by its clock, which may run ahead of this one's:
    // compared as if both were one clock, a device polling at its interval heard `slow_down` from every instance
    // behind, and its interval grew for good. So a poll counts as too soon only when it comes more than a second
    // (NTP keeps instances well within that; never more than `clockTolerance`, nor half the interval) before the
    // interval ends, and the note never moves back.
    const slackMs = Math.min(context.config.clockTolerance, POLL_SLACK_SECONDS, record.interval / 2) * 1000;
    const tooSoon = record.lastPollAt !== undefined && nowMs + slackMs < record.lastPollAt + record.interval * 1000;
    const interval = tooSoon ? record.interval + SLOW_DOWN_STEP : record.interval;
    const lastPollAt = Math.max(nowMs, record.lastPollAt ?? 0);
    if (await replaceDevice(context, found, { ...record, interval, lastPollAt })) {
      if (tooSoon) throw slowDown();
      throw new OAuthError('authorization_pending', 'the user has not yet approved the device');
    }
    found = await readDevice(context, found.grantId);
  }
  throw slowDown();
}

/**
 * Answers a device poll: `authorization_pending`, `slow_down`, `access_denied` (denied, or the approval withdrawn by
 * ending the user's sessions or disconnecting the app), `expired_token`, or the tokens. A device code presented by
 * another client than the one it was issued to is `invalid_grant` and changes nothing.
 *
 * @example
 * // POST /sentinel/api/account/123/token  grant_type=urn:ietf:params:oauth:grant-type:device_code&device_code=…&client_id=…
 * return handleDeviceCodeGrant(context, request, accountId, params, app, dpop);
 */
export async function handleDeviceCodeGrant(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  params: ParamMap,
  app: App,
  dpop?: PendingProof,
): Promise<SentinelResponse> {
  const deviceCode = required(params, 'device_code');
  requireGrant(app, DEVICE_CODE_GRANT);
  const grantId = deviceGrantId(deviceCode);
  const found = await readDevice(context, grantId);
  if (found === null) throw usedOrUnknown();
  const { record } = found;
  // Left to its own client, and answered as a made-up code: to another client (anyone who knows a public device
  // app's id) a refusal naming the reason would confirm that a device code it found is genuine and live.
  if (record.accountId !== accountId || record.clientId !== app.clientId) throw usedOrUnknown();
  const nowMs = Date.now();
  if (record.status === 'issued') throw usedOrUnknown();
  if (record.status === 'denied') throw new OAuthError('access_denied', 'the user denied the device authorization');
  if (record.expiresAt * 1000 <= nowMs) throw new OAuthError('expired_token', 'the device code has expired; start again');
  if (record.status === 'pending') return pendingPoll(context, found, nowMs);
  const { userId, authTime } = record;
  if (userId === undefined || authTime === undefined) throw new Error('the approved device authorization names no user');
  // RFC 8707 §2.2 as for a code: only resources the device authorization named, checked before anything is spent.
  const resources = tokenResources(context, app, params, record.resources ?? []);
  // The proof's jti is spent only once the device code has proved good for this client, as for a code.
  if (dpop !== undefined) await dpop.remember();
  const dpopJkt = dpop?.jkt;
  // A stored record is not trusted to name a method the service does not know: such an amr is dropped.
  const amr = readAmr(record.amr);
  const sid = deviceSid(accountId, userId, grantId);
  // Narrowed to the app's scope as it is now, as a code's and a refresh's are: an operator may have narrowed it while
  // the person approved and the device polled.
  const scope = withinAppScope(record.scope, app);
  const input = {
    grantType: DEVICE_CODE_GRANT,
    accountId,
    clientId: app.clientId,
    userId,
    grantId,
    authTime,
    amr,
    sid,
    scope,
    idToken: hasOpenIDScope(scope) ? { alg: appIdTokenAlg(context, app) } : null,
    ip: request.ip,
    dpopJkt,
    resources,
  } as const;
  const commit: CommitGrant = async (access) => {
    const start = {
      accountId,
      userId,
      scope,
      authTime,
      amr,
      sid,
      resources: record.resources,
      grantType: DEVICE_CODE_GRANT as typeof DEVICE_CODE_GRANT,
    };
    const { grant, refreshToken } = firstGrant(context, app, grantId, dpopJkt, access.exp, start);
    const spent = { ...record, status: 'issued' as const };
    const [now, written] = [JSON.stringify(spent), encodeGrant(grant)];
    const applied = await context.store.swap([
      { key: deviceKey(grantId), expect: found.stored, value: now, ttlMs: retainMs(spent) },
      { key: grantKey(grantId), expect: null, value: written, ttlMs: grantTtlMs(context, grant) },
    ]);
    // Another poll with the same device code took the tokens first: this one gets none.
    if (!applied) throw usedOrUnknown();
    // Since the approval the user may have signed out everywhere or disconnected the app: then no tokens. A store
    // failure there puts the approved record back as it was read, for the next poll.
    const credential = { key: deviceKey(grantId), now, before: found.stored, ttlMs: retainMs(record) };
    await attachDeviceGrant(context, grant, { grantId, written, credential });
    return refreshToken;
  };
  // As for a code: spent only if unchanged. A poll that took the tokens first made a grant, which is revoked.
  const spend = async (): Promise<void> => {
    await context.store.swap([{ key: deviceKey(grantId), expect: found.stored, value: null }]);
  };
  return issueUserTokens(context, input, commit, spend);
}
