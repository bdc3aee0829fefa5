/**
 * Interactions: the validated authorization request parked server-side while the user signs in.
 *
 * The browser carries only the opaque interaction id, so nothing it sends can change `client_id`,
 * `redirect_uri`, `state` or the PKCE challenge between /authorize and the code. The record also holds the
 * CSRF secret of the login form (RFC 6749 §10.12). Persisted as JSON under `interaction:{id}` for
 * `interactionTtl` seconds (default 10 minutes).
 */
import type { SentinelContext } from '../../http/context.js';
import { retryShortly } from '../../errors.js';
import { en } from '../../i18n/en.js';
import { puttingBackOnFailure } from '../../lib/put-back.js';
import { randomSecret } from '../../lib/random-secrets.js';
import { AuthorizationError } from '../request/authorization-error.js';
import type { AuthorizationRequest } from '../request/validate-request.js';
import { MAX_AUTHORIZATION_REQUEST_LENGTH } from '../request/request-params.js';
import { routePath } from '../../http/route-paths.js';
import { parseStoredRecord } from '../../stores/stored-record.js';

/** The device authorization (RFC 8628, `src/device/`) a sign-in is for, instead of an application's redirect. */
export interface DeviceInteraction {
  /** The grant id of the device code. */
  grantId: string;
  /** The user code, canonical, for the confirmation page to repeat. */
  userCode: string;
}

/** What an interaction stands for. */
export interface InteractionRecord {
  request: AuthorizationRequest;
  /** The login form's CSRF token; compared in constant time. */
  csrfToken: string;
  /** The host's mount prefix at /authorize, so `completeLogin()` can scope the cookie without a request. */
  mountPath: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  /**
   * Set when the sign-in is for a device (RFC 8628, `src/device/`): the request then has no redirect URI, and the end
   * of the sign-in leads to the device confirmation page instead of back to an application.
   */
  device?: DeviceInteraction | undefined;
  /**
   * A page of the service itself that this sign-in returns to (the account page), path-absolute with the mount
   * prefix. Such an interaction belongs to no app: its end creates the device session and goes back to this page,
   * and no code is ever issued for it. Only the service's own pages create one; `/authorize` never does.
   */
  returnTo?: string | undefined;
  /**
   * The digest of the session the browser's cookie named when the sign-in began, in this account (`prompt=login`,
   * `max_age`, a step-up, "Not you?") or another one (the cookie is one per browser): `browserSessionDigest`.
   * `completeLogin()` has no request, so no cookie: its sign-in replaces this session, as the login form's replaces
   * the session its cookie names.
   */
  sessionDigest?: string | undefined;
  /**
   * The digest of the login-page cookie of the browser the login page was last served to (`login-browser.ts`); set
   * with a fresh `csrfToken` whenever the page is served to another browser.
   */
  browser?: string | undefined;
}

/**
 * Most characters one parked interaction may hold, as stored (JSON). An ordinary one is about 600; the rest is what
 * the client chose to send (`state`, `nonce`, `scope`). Unauthenticated GETs create interactions, so this cap, times
 * the store's bound, is what a flood can hold: about 8.5 KiB charged per interaction in MemoryStore.
 */
export const MAX_INTERACTION_CHARS = 4096;

/**
 * Most characters the interaction of a pushed request (PAR) may hold. A push may carry up to
 * {@link MAX_AUTHORIZATION_REQUEST_LENGTH} characters, and a client that pushed one must not be told afterwards,
 * once its user has to sign in, that the request is too long to keep (a signed-in user never needed it kept). JSON
 * at most doubles printable text (a quote or backslash), so every push of printable parameters fits beside the
 * record's own fields. No more is opened to a flood: each such interaction took a push, which an authenticated
 * client made or a public client's address was counted for (`par.publicPushesPerAddress`), and the push's own record
 * of the same size is gone once taken.
 */
export const MAX_PUSHED_INTERACTION_CHARS = MAX_INTERACTION_CHARS + 2 * MAX_AUTHORIZATION_REQUEST_LENGTH;

/** The cap of `request`'s interaction: {@link MAX_PUSHED_INTERACTION_CHARS} for a pushed one, else {@link MAX_INTERACTION_CHARS}. */
function interactionCap(request: AuthorizationRequest): number {
  return request.pushed === true ? MAX_PUSHED_INTERACTION_CHARS : MAX_INTERACTION_CHARS;
}

/** Interaction ids are {@link randomSecret} values; anything else is not looked up. */
const INTERACTION_ID = /^[A-Za-z0-9_-]{43}$/;

function interactionKey(interactionId: string): string {
  return `interaction:${interactionId}`;
}

function parseRecord(value: string | null): InteractionRecord | null {
  return parseStoredRecord<InteractionRecord>(
    value,
    (record) => typeof record.csrfToken === 'string' && typeof record.request === 'object' && record.request !== null,
  );
}

/**
 * Where the refusal of an interaction too long to keep goes. RFC 6749 §4.1.2.1 asks for the request's `state` in
 * every error response, and the app needs it to tell this answer from a forged one: so it is echoed, unless the state
 * is itself what makes the record too long (the record would fit without it), when the Location header would carry
 * that oversized part whole. Beside a long `nonce` or `scope`, a short state is what the app needs back.
 */
function oversizedTarget(record: InteractionRecord): AuthorizationRequest {
  const { state: _state, ...withoutState } = record.request;
  const fitsWithoutState = JSON.stringify({ ...record, request: withoutState }).length <= interactionCap(record.request);
  return fitsWithoutState ? withoutState : record.request;
}

/**
 * Parks a validated request and returns the new interaction id. `admit`, when given, runs after the size check and
 * before the write (the per-address bound, `interaction-bound.ts`): a request refused for its size is not counted.
 *
 * @throws AuthorizationError (invalid_request, back to the app) when the record would exceed its cap
 * ({@link MAX_INTERACTION_CHARS}, {@link MAX_PUSHED_INTERACTION_CHARS} for a pushed request).
 * @example
 * const interactionId = await createInteraction(context, authorization, request.mountPath);
 */
export async function createInteraction(
  context: SentinelContext,
  request: AuthorizationRequest,
  mountPath: string | undefined,
  device?: DeviceInteraction,
  returnTo?: string,
  sessionDigest?: string,
  admit?: () => Promise<void>,
): Promise<string> {
  const interactionId = randomSecret();
  const record: InteractionRecord = { request, csrfToken: randomSecret(), mountPath: mountPath ?? '', createdAt: Date.now() };
  if (device !== undefined) record.device = device;
  if (returnTo !== undefined) record.returnTo = returnTo;
  if (sessionDigest !== undefined) record.sessionDigest = sessionDigest;
  const serialized = JSON.stringify(record);
  const cap = interactionCap(request);
  if (serialized.length > cap) {
    throw new AuthorizationError(
      'invalid_request',
      `state, nonce and scope are too long to keep while the user signs in (over ${cap} characters together)`,
      oversizedTarget(record),
    );
  }
  await admit?.();
  await context.store.set(interactionKey(interactionId), serialized, context.config.interactionTtl * 1000);
  return interactionId;
}

/**
 * The interaction, or `null` when unknown, expired or already completed.
 *
 * @example
 * const interaction = await findInteraction(context, request.query.get('interaction'));
 */
export async function findInteraction(
  context: SentinelContext,
  interactionId: string | null | undefined,
): Promise<InteractionRecord | null> {
  if (interactionId === null || interactionId === undefined || !INTERACTION_ID.test(interactionId)) return null;
  const record = parseRecord(await context.store.get(interactionKey(interactionId)));
  // Interactions are made only for an account found in the app store (authorization, account page, device sign-in).
  if (record !== null) context.observation?.noteAccount(record.request.accountId);
  return record;
}

/** Compare-and-set attempts of {@link bindInteraction} before it tells the browser to try again. */
const BIND_ATTEMPTS = 3;

/**
 * The interaction tied to the browser whose login-page cookie has digest `browser`: unchanged when it already is,
 * else rewritten with that digest and a new CSRF token, so a token read by whoever served the page to themselves
 * before is worthless in the browser it is now tied to. `null` when the interaction is gone. A compare-and-set on the
 * stored value: of two browsers opening the page at once, each ends with a record tied to one of them (retried).
 * Losing every attempt means other browsers kept opening the same link at that moment (a link scanner, a page
 * reloaded in a loop): that is contention, not a fault of the service, so it is a `503 temporarily_unavailable` with
 * `Retry-After` (a reload ties the page to this browser), not a `500` reported to `onError`. The page is never served
 * untied, which would hand out a CSRF token some other browser's tie has already replaced.
 *
 * @throws OAuthError temporarily_unavailable (503, `Retry-After: 1`) when every attempt lost to another browser.
 * @example
 * const record = await bindInteraction(context, interactionId, digest(cookieValue));
 */
export async function bindInteraction(context: SentinelContext, interactionId: string, browser: string): Promise<InteractionRecord | null> {
  if (!INTERACTION_ID.test(interactionId)) return null;
  const key = interactionKey(interactionId);
  for (let attempt = 0; attempt < BIND_ATTEMPTS; attempt++) {
    const stored = await context.store.get(key);
    const record = parseRecord(stored);
    if (record === null || record.browser === browser) return record;
    const ttlMs = record.createdAt + context.config.interactionTtl * 1000 - Date.now();
    if (!(ttlMs > 0)) return null;
    const bound: InteractionRecord = { ...record, browser, csrfToken: randomSecret() };
    if (await context.store.swap([{ key, expect: stored, value: JSON.stringify(bound), ttlMs }])) return bound;
  }
  throw retryShortly(en.loginPageBusy);
}

/**
 * Atomically ends the interaction and returns it; of concurrent completions exactly one gets the record.
 *
 * @example
 * const interaction = await takeInteraction(context, interactionId);
 */
export async function takeInteraction(context: SentinelContext, interactionId: string): Promise<InteractionRecord | null> {
  if (!INTERACTION_ID.test(interactionId)) return null;
  const key = interactionKey(interactionId);
  // Read first, so that a take which landed with its answer lost (a Redis timeout after Redis ran it) can be undone:
  // what it took goes back, as after any failure of the sign-in's end (restoringInteraction), and the retry of the
  // same form finds the sign-in instead of "link expired". A take that never landed leaves the key, and the put-back
  // (onto an empty key only) changes nothing.
  const seen = parseRecord(await context.store.get(key));
  if (seen === null) return null;
  try {
    return parseRecord(await context.store.take(key));
  } catch (error) {
    await restoreInteraction(context, interactionId, seen).catch(() => false);
    throw error;
  }
}

/**
 * Puts back an interaction that {@link takeInteraction} took for a step that then did not go on (a recovery code
 * refused, a hook failing before the code was spent), for the rest of the lifetime it was created with. Only onto an
 * empty key, and not once that lifetime is over.
 *
 * @returns `false` when the interaction's lifetime is over (nothing is written).
 * @example
 * await restoreInteraction(context, interactionId, taken);
 */
export async function restoreInteraction(context: SentinelContext, interactionId: string, taken: InteractionRecord): Promise<boolean> {
  const ttlMs = taken.createdAt + context.config.interactionTtl * 1000 - Date.now();
  if (!INTERACTION_ID.test(interactionId) || !(ttlMs > 0)) return false;
  return context.store.swap([{ key: interactionKey(interactionId), expect: null, value: JSON.stringify(taken), ttlMs }]);
}

/**
 * Runs the end of a sign-in whose interaction was just taken, and puts the interaction back
 * ({@link restoreInteraction}) when that end fails on the service's side: a store write of the session or the code,
 * an `onEvent` that vetoes, a signing key (whatever the edge answers with `500 server_error`). The failure then
 * spends nothing the user needs: the retry of the same form, or the host's of `completeLogin()`, finds the
 * interaction and signs the user in, instead of a "link expired" page and a new start at the application. A refusal
 * (any other `OAuthError`) leaves it spent. When putting it back fails as well (the store is down), the original
 * failure is what is thrown.
 *
 * @example
 * return await restoringInteraction(context, interactionId, taken, () => signedInResponse(context, taken, input));
 */
export async function restoringInteraction<T>(
  context: SentinelContext,
  interactionId: string,
  taken: InteractionRecord,
  end: () => Promise<T>,
): Promise<T> {
  return puttingBackOnFailure(end, () => restoreInteraction(context, interactionId, taken));
}

/**
 * The built-in login page of an interaction: path-absolute (with the host's mount prefix) so it works whatever
 * host name the browser used.
 *
 * @example
 * builtInLoginURL(context, '', '123456', interactionId) // '/sentinel/api/account/123456/login?interaction=…'
 */
export function builtInLoginURL(context: SentinelContext, mountPath: string | undefined, accountId: string, interactionId: string): string {
  return `${mountPath ?? ''}${routePath(context.config, 'login', { accountId })}?interaction=${encodeURIComponent(interactionId)}`;
}

/**
 * Where the browser goes to sign in: the host's own page when `login.url` is set, else the built-in page.
 *
 * @example
 * redirect(302, loginPageURL(context, request.mountPath, accountId, interactionId))
 */
export function loginPageURL(context: SentinelContext, mountPath: string | undefined, accountId: string, interactionId: string): string {
  const external = context.config.login.url;
  if (external === undefined) return builtInLoginURL(context, mountPath, accountId, interactionId);
  return `${external}${external.includes('?') ? '&' : '?'}interaction=${encodeURIComponent(interactionId)}`;
}
