/**
 * Operators sign in through the service itself: the console is a public client (PKCE, RFC 7636 S256) of the
 * account's authorization endpoint, so the login page, passkeys, TOTP, throttles and audit events are the service's
 * own. The code is exchanged in-process at the service's token endpoint (`service.handle()`, no network hop), the
 * access token verified with the service's verifier; its `sub` is the operator's user id, and its grant (`gid`) names
 * the device session the console session is tied to.
 */
import { createHash } from 'node:crypto';
import type { App, AppStore } from '../apps/app.js';
import { appFromInput } from '../apps/app-schema.js';
import { isOAuthError } from '../errors.js';
import type { SentinelContext } from '../http/context.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { headerValue, redirect } from '../http/messages.js';
import { clientIP } from '../http/client-ip.js';
import { routePath, routeUrl } from '../http/route-paths.js';
import { digest, randomSecret } from '../lib/random-secrets.js';
import type { ConsoleService } from './service.js';
import {
  CONSOLE_COOKIE,
  consoleCookie,
  createOperatorSession,
  discardOperatorSession,
  type OperatorSessionLifetime,
  SIGN_IN_COOKIE,
} from './operator-session.js';
import { readCookie } from '../http/cookies.js';
import { ConsoleRefusal } from './refusal.js';
import { ExchangeFailure } from './exchange-failure.js';
import { originOfGrant, type SessionOrigin } from './session-origin.js';
import type { Store } from '../stores/store.js';
import { takeInteractionSlot } from '../authorize/state/interaction-bound.js';
import { parseStoredRecord } from '../stores/stored-record.js';

/**
 * The client id of the console's own client in each account it signs operators in to (registered on the first
 * sign-in; the console does not let it be changed).
 *
 * @example
 * const consoleClient = await appStore.findApp('123456', CONSOLE_CLIENT_ID);
 */
export const CONSOLE_CLIENT_ID = 'sentinel-console';

/** The actor of the console's own changes to its client (not an operator's: no one is signed in yet). */
const CONSOLE_ACTOR = 'console';

/**
 * How long a sign-in may take from the console's redirect to its callback, at most: never longer than
 * `interactionTtl` (see {@link signInTtl}).
 */
const SIGN_IN_TTL_SECONDS = 600;

/**
 * The pending sign-in's lifetime. It counts on the interaction bound, whose window (`interactionTtl`) is what bounds
 * the live records of one address by the limit: a record outliving it let an address hold more (ten times the limit
 * under a one-minute `interactionTtl`). It needs no longer anyway: the sign-in's interaction ends with the window.
 */
function signInTtl(context: SentinelContext): number {
  return Math.min(SIGN_IN_TTL_SECONDS, context.config.interactionTtl);
}

/**
 * A prefix of its own, not shared with the console sessions (`console-session:`): MemoryStore keeps one LRU per
 * prefix, and anyone may start sign-ins, so a shared one let a flood of them evict every operator's session.
 */
const signInKey = (state: string): string => `console-sign-in:${digest(state)}`;

interface PendingSignIn {
  accountId: string;
  verifier: string;
}

/** Where the console is, as `sign-in.ts` needs it: the base path and the absolute callback URL, both configured. */
export interface ConsoleLocation {
  /** The console's path as the browser sees it (mount prefix included): its cookies' path. */
  base: string;
  /** The absolute URL of `{base}/callback`: the redirect URI of the console's client. */
  callbackUrl: string;
  /** Whether cookies get `Secure`. */
  secure: boolean;
}

/** Whether the registry lists the console's client of the account as disabled (turned off by whoever runs it). */
async function isDisabled(apps: AppStore, accountId: string): Promise<boolean> {
  if (apps.listApps === undefined) return false;
  const listed = await apps.listApps(accountId);
  return listed.some((app) => app.clientId === CONSOLE_CLIENT_ID && app.disabled === true);
}

/**
 * Whether the console is off for the account: its client disabled (unknown to `findApp`, listed as disabled). Asked
 * on every request of a console session too, so that turning the console off ends the sessions it already has.
 *
 * @example if (await consoleTurnedOff(context.apps, accountId)) throw new ConsoleRefusal('console_disabled');
 */
export async function consoleTurnedOff(apps: AppStore, accountId: string): Promise<boolean> {
  if ((await apps.findApp(accountId, CONSOLE_CLIENT_ID)) !== null) return false;
  return isDisabled(apps, accountId);
}

/**
 * The console's client as the account must have it with the configured callback URL, or `null` when it has it
 * already. Refuses an account the registry does not know (no client is created in an account that does not exist),
 * and one whose console client is disabled (the console is off there until it is enabled again). Writes nothing:
 * {@link saveConsoleClient} does, once the sign-in has passed its throttle, so a refused one changes nothing.
 */
async function consoleClientChange(context: SentinelContext, accountId: string, callbackUrl: string): Promise<ConsoleClientChange | null> {
  const { apps } = context;
  if (!(await apps.hasAccount(accountId))) throw new ConsoleRefusal('unknown_account', { target: accountId });
  const existing = await apps.findApp(accountId, CONSOLE_CLIENT_ID);
  if (existing !== null && existing.redirectUris.length === 1 && existing.redirectUris[0] === callbackUrl) return null;
  // findApp does not return a disabled app: without this, every visit would save the client again (still disabled)
  // and announce it as newly registered, and the operator would land on the authorization endpoint's error.
  if (existing === null && (await isDisabled(apps, accountId))) throw new ConsoleRefusal('console_disabled', { target: accountId });
  if (apps.saveApp === undefined) throw new ConsoleRefusal('unsupported');
  const app: App = appFromInput(
    {
      accountId,
      clientId: CONSOLE_CLIENT_ID,
      name: 'Operator console',
      redirectUris: [callbackUrl],
      grantTypes: ['authorization_code'],
      tokenEndpointAuthMethod: 'none',
    },
    'console client',
  );
  return { app: { ...app, createdAt: existing?.createdAt ?? Math.floor(Date.now() / 1000) }, existing };
}

/** The console's client to save, and the one the registry had (`null`: none yet). */
interface ConsoleClientChange {
  app: App;
  existing: App | null;
}

/**
 * Saves the console's client through the AppStore. Anyone may start a sign-in, so the change is audited like any
 * other registry change: `app.registered` or `app.updated` (actor `console`), committed since the client is saved.
 */
async function saveConsoleClient(context: SentinelContext, { app, existing }: ConsoleClientChange): Promise<void> {
  const { accountId } = app;
  await context.apps.saveApp?.(app, { actor: CONSOLE_ACTOR });
  if (existing === null)
    context.emit({ type: 'app.registered', accountId, clientId: CONSOLE_CLIENT_ID, actor: CONSOLE_ACTOR }, 'committed');
  else
    context.emit(
      { type: 'app.updated', accountId, clientId: CONSOLE_CLIENT_ID, actor: CONSOLE_ACTOR, changed: ['redirectUris'] },
      'committed',
    );
}

/**
 * Counts a new pending sign-in against the client address's `interactionsPerAddress`, as `/authorize` and the account
 * page count theirs: anyone may start one, with no credential asked, and each is stored for ten minutes, so unbounded
 * one host could fill MemoryStore's `console-sign-in:` budget (evicting the sign-ins operators have under way) or a
 * `noeviction` Redis, which then refuses every write of the service.
 */
async function boundedSignIn(context: SentinelContext, ip: string | null): Promise<void> {
  try {
    await takeInteractionSlot(context, ip);
  } catch (error) {
    if (isOAuthError(error) && error.code === 'temporarily_unavailable') {
      throw new ConsoleRefusal('throttled', { headers: error.headers });
    }
    throw error;
  }
}

/**
 * `GET {base}/sign-in?account=…`: the 303 to the account's authorization endpoint. `ip`: the client address the
 * pending sign-in counts against. `maxAge`: the console's `idleTtl`, sent as `max_age` (OpenID Connect Core
 * §3.1.2.1): a device session whose sign-in is older asks for the password again. Without it, a console session
 * ended by its idle timeout came back at one click for whoever sat at the computer, the device session (idle 60
 * minutes) signing them in.
 */
export async function startSignIn(
  service: ConsoleService,
  context: SentinelContext,
  location: ConsoleLocation,
  accountId: string,
  ip: string | null,
  maxAge: number,
): Promise<SentinelResponse> {
  // Refusals that need no slot first (an unknown account, the console off), then the slot, then the only write.
  const change = await consoleClientChange(context, accountId, location.callbackUrl);
  await boundedSignIn(context, ip);
  if (change !== null) await saveConsoleClient(context, change);
  const state = randomSecret();
  const verifier = randomSecret();
  const pending: PendingSignIn = { accountId, verifier };
  const ttlSeconds = signInTtl(context);
  await context.store.set(signInKey(state), JSON.stringify(pending), ttlSeconds * 1000);
  const authorize = new URL(routeUrl(service.config, 'authorize', { accountId }));
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: CONSOLE_CLIENT_ID,
    redirect_uri: location.callbackUrl,
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    max_age: String(maxAge),
  }).toString();
  return redirect(303, authorize.toString(), {
    'set-cookie': consoleCookie(SIGN_IN_COOKIE, state, location.base, location.secure, ttlSeconds),
  });
}

/** What a completed sign-in gives the router: who signed in, and the origin a console session of theirs is tied to. */
export interface SignedIn {
  accountId: string;
  userId: string;
  origin: SessionOrigin;
}

/**
 * `GET {base}/callback?code&state`: spends the pending sign-in (single use, bound to this browser's cookie),
 * exchanges the code with its verifier and verifies the token. It opens no console session: the router does, once
 * `authorize()` has made the user an operator. `null` when any step fails: the caller shows a
 * "sign-in did not complete" page (the service's own events say why). A failing store, here or behind the token
 * endpoint's 5xx ({@link ExchangeFailure}), rejects instead: the caller's 500.
 */
export async function finishSignIn(
  service: ConsoleService,
  context: SentinelContext,
  location: ConsoleLocation,
  request: SentinelRequest,
): Promise<SignedIn | null> {
  const state = request.query.get('state');
  const code = request.query.get('code');
  const bound = readCookie(request, SIGN_IN_COOKIE);
  if (state === null || code === null || bound === null || bound !== state || state.length > 200 || code.length > 1000) return null;
  const stored = await context.store.take(signInKey(state));
  if (stored === null) return null;
  // Read as every stored record is: a value that does not parse (JSON.parse's own error would quote it, verifier
  // and all, to onError) or lacks a field is no pending sign-in.
  const pending = parseStoredRecord<PendingSignIn>(
    stored,
    (record) => typeof record.accountId === 'string' && typeof record.verifier === 'string',
  );
  if (pending === null) return null;
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: location.callbackUrl,
    client_id: CONSOLE_CLIENT_ID,
    code_verifier: pending.verifier,
  }).toString();
  // The exchange's own events (token.issued) name the operator's request: its client address as trustProxy reads it
  // from this request (the in-process request has no proxy in front, so the address goes as its socket's), and its
  // request id. Not the proxy's address, and not a request id of its own that ties to nothing.
  const ip = clientIP(service.config, request) ?? undefined;
  const correlation = Object.fromEntries(
    ['traceparent', 'x-request-id'].flatMap((name) => {
      const value = headerValue(request, name);
      return value === undefined ? [] : [[name, value]];
    }),
  );
  const answer = await service.handle({
    method: 'POST',
    path: routePath(service.config, 'token', { accountId: pending.accountId }),
    query: new URLSearchParams(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', host: new URL(location.callbackUrl).host, ...correlation },
    body,
    ip,
    secure: request.secure,
  });
  // A 5xx is the service failing (its store, say), not the sign-in: the console's 500, not its "try again" page.
  if (answer !== null && answer.status >= 500) throw new ExchangeFailure(answer.status, answer.body);
  if (answer === null || answer.status !== 200 || answer.body === undefined) return null;
  const token = (JSON.parse(answer.body) as { access_token?: unknown }).access_token;
  if (typeof token !== 'string') return null;
  let claims: { sub?: unknown; gid?: unknown };
  try {
    claims = await service.verifyAccessToken(token, { accountId: pending.accountId });
  } catch (error) {
    if (isOAuthError(error)) return null;
    throw error;
  }
  const { sub, gid } = claims;
  if (typeof sub !== 'string' || sub === '' || typeof gid !== 'string') return null;
  // The console session is tied to the device session and grant of this exchange (session-origin.ts): found in the
  // index now, checked on every request after.
  const origin = await originOfGrant(context, pending.accountId, sub, gid);
  if (origin === null) return null;
  return { accountId: pending.accountId, userId: sub, origin };
}

/** The `Set-Cookie` that removes the spent sign-in binding. */
export function spentSignInCookie(location: ConsoleLocation): string {
  return consoleCookie(SIGN_IN_COOKIE, '', location.base, location.secure, 0);
}

/**
 * Opens the console session of an operator `authorize()` admitted, and answers the cookies a completed sign-in sets:
 * the session, and the spent sign-in binding removed. `announce` (the `console.signed_in` event) runs once the
 * session is stored, so a session that could not be stored is never announced; an `onEvent` that vetoes it deletes
 * the session again before the failure goes on, so no record is left that no cookie points to.
 *
 * @example const cookies = await openOperatorSession(context.store, location, signedIn, { absolute: 28_800, idle: 1800 }, () => emit(signedInEvent));
 */
export async function openOperatorSession(
  store: Store,
  location: ConsoleLocation,
  signedIn: SignedIn,
  lifetime: OperatorSessionLifetime,
  announce: () => void = () => undefined,
): Promise<string[]> {
  const { accountId, userId, origin } = signedIn;
  const sessionId = await createOperatorSession(store, { accountId, userId, ...origin }, lifetime);
  try {
    announce();
  } catch (error) {
    await discardOperatorSession(store, sessionId);
    throw error;
  }
  return [consoleCookie(CONSOLE_COOKIE, sessionId, location.base, location.secure, lifetime.absolute), spentSignInCookie(location)];
}
