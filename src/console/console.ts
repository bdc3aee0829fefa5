/**
 * `createConsole()`: the operator console as a request handler with the service's own shape (`handle()` and
 * `config`), so the same adapters mount it (`app.use(toExpress(console))`). This file routes and guards: the
 * session, the account, the CSRF token and the role come before any page or action, and every refusal becomes
 * the page's message and a `console.denied` event.
 */
import type { ResolvedConfig } from '../config.js';
import { ConfigurationError } from '../errors.js';
import { clientIP } from '../http/client-ip.js';
import { contextOf } from '../http/context.js';
import { type ConsoleDeps, scopedContext } from './deps.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { headerValue, redirect } from '../http/messages.js';
import { isMountPath, mountPathRefusal } from '../http/mount-path.js';
import { isAccountId } from '../lib/account-id.js';
import { catchRejection } from '../lib/thenable.js';
import { assertKnownKeys, type KeysOf } from '../lib/strict-options.js';
import { tapEvents } from '../events/event-taps.js';
import { escapeHTML } from '../authorize/pages/escape-html.js';
import { appsAction, appsPage, appPage } from './apps-page.js';
import { checkedForm } from './checked-form.js';
import { auditPage } from './audit-page.js';
import { MemoryEventLog } from '../events/event-log.js';
import { ExchangeFailure } from './exchange-failure.js';
import { keysAction, keysPage, revokeConfirmPage } from './keys-page.js';
import { chooseConsoleLocale, consoleCatalogues, consoleDefaultLocale, isPlainObject } from './messages/console-locale.js';
import {
  endOperatorSession,
  type OperatorSession,
  readOperatorSession,
  type StoredOperatorSession,
  useOperatorSession,
} from './operator-session.js';
import { type ConsoleCall, consolePage, paragraph, text, textHTML } from './page.js';
import { ConsoleRefusal, formTarget, pathTarget, refusedAction } from './refusal.js';
import { type RefusedAim, refusalOf, refused } from './refused-page.js';
import type { ConsoleOptions, ConsoleService } from './service.js';
import { originStands } from './session-origin.js';
import { sessionsAction, sessionsPage } from './sessions-page.js';
import { signedOutPage } from './sign-out.js';
import { type ConsoleLocation, consoleTurnedOff, finishSignIn, openOperatorSession, spentSignInCookie, startSignIn } from './sign-in.js';

/**
 * The operator console: mount it with the service's adapters, like the service itself.
 *
 * @example
 * const operatorConsole: SentinelConsole = createConsole(sentinel, { authorize });
 * app.use(toExpress(operatorConsole));
 */
export interface SentinelConsole {
  /** The service's configuration with the console's path as `basePath` (what the adapters read). */
  readonly config: ResolvedConfig;
  /** Handles one request; `null` when the path is not the console's. */
  handle(request: SentinelRequest): Promise<SentinelResponse | null>;
}

const OPTION_KEYS = {
  authorize: true,
  path: true,
  mountPath: true,
  keysAccountId: true,
  events: true,
  eventBufferSize: true,
  sessionTtl: true,
  idleTtl: true,
  i18n: true,
} satisfies KeysOf<ConsoleOptions>;

function checkPath(path: string): string {
  if (!/^\/[A-Za-z0-9._~\-/]*$/.test(path) || path.endsWith('/') || path.includes('//')) {
    throw new ConfigurationError('console.path', 'must start with / and not end with one, e.g. "/console"');
  }
  return path;
}

function checkMountPath(mountPath: string): string {
  // Its own characters, and never a `.` or `..` segment: the callback URL is registered as written and compared
  // exactly, where a browser would resolve the dots away (src/http/mount-path.ts).
  if (mountPath !== '' && (!/^(\/[A-Za-z0-9._~-]+)+$/.test(mountPath) || !isMountPath(mountPath))) {
    throw new ConfigurationError('console.mountPath', 'must be "" or start with / and not end with one, e.g. "/ops"');
  }
  return mountPath;
}

/**
 * Creates the operator console of a service: apps, keys, sessions and audit pages for the operators that
 * `authorize` admits, who sign in through the service's own login.
 *
 * @example
 * const operatorConsole = createConsole(sentinel, {
 *   authorize: ({ accountId, userId }) => (accountId === '123456' && userId === 'alice' ? 'admin' : null),
 *   keysAccountId: '123456',
 * });
 * app.use(toExpress(operatorConsole)); // https://id.example.com/console/
 * @throws ConfigurationError naming a wrong option.
 */
export function createConsole(service: ConsoleService, options: ConsoleOptions): SentinelConsole {
  assertKnownKeys(options, OPTION_KEYS, 'console');
  if (typeof options.authorize !== 'function') throw new ConfigurationError('console.authorize', 'must be a function');
  const path = checkPath(options.path ?? '/console');
  const sessionTtl = options.sessionTtl ?? 28_800;
  if (!Number.isInteger(sessionTtl) || sessionTtl < 60 || sessionTtl > 7 * 86_400) {
    throw new ConfigurationError('console.sessionTtl', 'must be a whole number of seconds from 60 to 604800');
  }
  const idleTtl = options.idleTtl ?? Math.min(1800, sessionTtl);
  if (!Number.isInteger(idleTtl) || idleTtl < 60 || idleTtl > sessionTtl) {
    throw new ConfigurationError('console.idleTtl', `must be a whole number of seconds from 60 to sessionTtl (${sessionTtl})`);
  }
  const bufferSize = options.eventBufferSize ?? 1000;
  if (!Number.isInteger(bufferSize) || bufferSize < 1 || bufferSize > 100_000) {
    throw new ConfigurationError('console.eventBufferSize', 'must be a whole number from 1 to 100000');
  }
  // Read at the first visit of the audit page, not now: without this, one that cannot answer fails every visit.
  if (
    options.events !== undefined &&
    (typeof options.events !== 'object' || options.events === null || typeof options.events.query !== 'function')
  ) {
    throw new ConfigurationError('console.events', 'must be an event source with query() (a PostgresEventLog)');
  }
  // Compared with the signed-in account as is: another type (a number from a JSON file) would never match, and the
  // keys would be read-only for everyone, with nothing said.
  if (options.keysAccountId !== undefined && (typeof options.keysAccountId !== 'string' || options.keysAccountId === '')) {
    throw new ConfigurationError('console.keysAccountId', 'must be an account id (a non-empty string)');
  }
  // Options are checked before the event tap below subscribes, so a refused one leaves nothing attached to the service.
  const issuer = new URL(service.config.issuer);
  const mountPath = options.mountPath === undefined ? issuer.pathname.replace(/\/$/, '') : checkMountPath(options.mountPath);
  if (options.i18n !== undefined && !isPlainObject(options.i18n)) throw new ConfigurationError('console.i18n', 'must be an object');
  assertKnownKeys(options.i18n, { defaultLocale: true, catalogues: true }, 'console.i18n');
  const catalogues = consoleCatalogues(options.i18n?.catalogues);
  const defaultLocale = consoleDefaultLocale(catalogues, options.i18n?.defaultLocale ?? 'en');
  const context = contextOf(service);
  let events = options.events;
  if (events === undefined) {
    const memory = new MemoryEventLog(bufferSize);
    tapEvents(service.config, (event) => memory.record(event));
    events = memory;
  }
  const deps: ConsoleDeps = { service, context, options, events, bufferSize, sessionTtl, idleTtl };
  const config: ResolvedConfig = { ...service.config, basePath: path };
  // The callback is the registered redirect URI of the console's client, which every sign-in to the account shares:
  // it comes from configuration, not from the request. Express matches a mount prefix in any case, so a visitor's
  // `/OPS/console/sign-in` would otherwise re-register the client and break the sign-ins under way at `/ops`.
  const location: ConsoleLocation = {
    base: `${mountPath}${path}`,
    callbackUrl: `${issuer.origin}${mountPath}${path}/callback`,
    secure: !service.config.insecureLoopback,
  };

  async function handle(request: SentinelRequest): Promise<SentinelResponse | null> {
    if (request.path !== path && !request.path.startsWith(`${path}/`)) return null;
    const rest = request.path.slice(path.length).replace(/^\/+/, '');
    const locale = chooseConsoleLocale(catalogues, headerValue(request, 'accept-language'), defaultLocale);
    // The service's rule for a mount path (src/http/mount-path.ts): one a client chose through a parameterised mount
    // never heads a link, a redirect or a cookie path. The refusal's page links to the configured address instead.
    const mountRefusal = mountPathRefusal(request);
    if (mountRefusal !== undefined) return malformedMountPage({ request, locale, base: location.base }, mountRefusal.description);
    // Links stay where the page was reached: relative to the request, they route as it did.
    const call: ConsoleCall = { request, locale, base: `${request.mountPath ?? ''}${path}` };
    const aim: RefusedAim = { action: `${request.method} ${rest.split('/').slice(1).join('/') || rest}` };
    try {
      return await route(deps, call, location, rest, sessionTtl, (named) => Object.assign(aim, named));
    } catch (error) {
      const refusal = refusalOf(error);
      if (refusal === undefined) return failed(call, error);
      try {
        return await refused(deps, call, aim, refusal);
      } catch (hookError) {
        // An onEvent that throws on console.denied vetoes the refusal's page, as at the service's edge: the hook's
        // failure goes to onError and the answer is the console's 500 page, with its headers, not a rejection.
        return failed(call, hookError);
      }
    }
  }

  /** The console's 500 page, its cause told to `onError` (unless the service's edge told it already). */
  function failed(call: ConsoleCall, error: unknown): SentinelResponse {
    // A token endpoint's server_error under the callback: the service's edge has reported its cause already.
    const reported = error instanceof ExchangeFailure && error.reported;
    try {
      if (!reported) catchRejection(service.config.onError?.(error, { route: 'console', accountId: call.operator?.accountId }));
    } catch {
      // A throwing onError must not take the host down.
    }
    return consolePage(service.config, call, {
      title: text(call, 'errorTitle'),
      content: paragraph(text(call, 'serverError'), 'error'),
      status: 500,
    });
  }
  /** The 400 page of a request under a malformed mount path: nothing read, nothing stored, nothing audited. */
  function malformedMountPage(call: ConsoleCall, detail: string): SentinelResponse {
    return consolePage(service.config, call, {
      title: text(call, 'errorTitle'),
      content: `${paragraph(text(call, 'refusedInvalid', { detail }), 'error')}\n<p><a href="${escapeHTML(`${call.base}/`)}">${escapeHTML(text(call, 'back'))}</a></p>`,
      status: 400,
    });
  }
  return { config, handle };
}

async function route(
  deps: ConsoleDeps,
  call: ConsoleCall,
  location: ConsoleLocation,
  rest: string,
  sessionTtl: number,
  name: (aim: RefusedAim) => void,
): Promise<SentinelResponse> {
  const { request } = call;
  const { service } = deps;
  const { method } = request;
  // Its GETs start sign-ins, finish them into operator sessions and mint one-use form tokens: a HEAD would do all
  // that for an answer without a body, so it is refused, as on the service's own routes (src/http/router.ts). So is
  // every other method it has no use for (PUT, DELETE, OPTIONS, …): a 405 naming the two it takes, before any session
  // is read or any refusal audited, rather than a 404 or a forged form's 403 and its console.denied event.
  if (method !== 'GET' && method !== 'POST') return notFoundPage(deps, call, 405);
  if (rest === '' && method === 'GET') return chooserPage(deps, call);
  if (rest === 'sign-in' && method === 'GET') {
    const accountId = request.query.get('account')?.trim() ?? '';
    name({ action: 'sign-in', account: accountId });
    // The service's own rule for an account id (up to 256 characters): what it refuses is no account anywhere.
    if (!isAccountId(accountId)) throw new ConsoleRefusal('unknown_account', { target: accountId.slice(0, 200) });
    // The request's context: the registry event of a client registered or corrected carries its address and id.
    return startSignIn(service, scopedContext(deps, request), location, accountId, clientIP(service.config, request), deps.idleTtl);
  }
  if (rest === 'callback' && method === 'GET') return callback(deps, call, location, sessionTtl);
  if (rest === 'sign-out' && method === 'POST') {
    const stored = await readOperatorSession(deps.context.store, request);
    name({ action: 'sign-out', account: stored?.accountId, operator: stored?.userId });
    if (stored !== null) {
      await checkedForm(deps, call, stored);
      await endOperatorSession(deps.context.store, request);
    }
    // A session its idle timeout ended leaves the device session it came from: the form names its account, so the
    // page still offers to end that session (a link to the account's logout, nothing else is read from it).
    const named = request.query.get('account') ?? '';
    return signedOutPage(deps, call, location, stored?.accountId ?? (isAccountId(named) ? named : undefined));
  }
  const [rawAccount = '', ...parts] = rest.split('/');
  let accountId: string;
  try {
    accountId = decodeURIComponent(rawAccount);
  } catch {
    throw new ConsoleRefusal('unknown_account', { target: '' });
  }
  const sub = parts.join('/');
  const target = pathTarget(parts.map(decodePart));
  const stored = await liveOperatorSession(deps, request);
  if (stored === null) {
    // Not signed in: a page sends the browser to sign in; a change without a session is a forged or stale form.
    if (method === 'GET') return redirect(303, `${call.base}/sign-in?account=${encodeURIComponent(accountId)}`);
    name({ action: `${method} ${sub}`, target, account: accountId });
    throw new ConsoleRefusal('csrf');
  }
  if (await consoleTurnedOff(deps.context.apps, stored.accountId)) {
    // The console client disabled since this session signed in: the console is off for the account, for the sessions
    // it has as for new sign-ins. Ended, not kept for when it is on again: whoever turned it off may be shutting out
    // one of its operators.
    await endOperatorSession(deps.context.store, request);
    name({ action: `${method} ${sub}`, target, account: stored.accountId, operator: stored.userId });
    throw new ConsoleRefusal('console_disabled', { target: stored.accountId });
  }
  const role = await deps.options.authorize({ accountId: stored.accountId, userId: stored.userId });
  if (role !== 'admin' && role !== 'viewer') {
    // Signed in, but no longer an operator (the role withdrawn since): refused like any other request, and audited.
    // A throwing onEvent vetoes the page: the console's 500, as for any refusal.
    scopedContext(deps, request).emit({
      type: 'console.denied',
      accountId: stored.accountId,
      operator: stored.userId,
      action: refusedAction(`${method} ${sub}`),
      reason: 'not_operator',
      target,
    });
    return notOperatorPage(deps, call, stored.accountId);
  }
  const operator: OperatorSession = { ...stored, role };
  call.operator = operator;
  name({ action: `${method} ${sub}`, target });
  // The operator's account is the one they signed in to; an address naming another one is refused, not followed.
  if (accountId !== operator.accountId) throw new ConsoleRefusal('account');
  if (method === 'GET') {
    if (sub === '' || sub === 'apps') return appsPage(deps, call);
    if (parts[0] === 'apps' && parts.length === 2) return appPage(deps, call, decodePart(parts[1]));
    if (sub === 'keys') return keysPage(deps, call);
    if (parts[0] === 'keys' && parts.length === 3 && parts[2] === 'revoke') return revokeConfirmPage(deps, call, decodePart(parts[1]));
    if (sub === 'sessions') return sessionsPage(deps, call);
    if (sub === 'audit') return auditPage(deps, call);
    return notFoundPage(deps, call);
  }
  if (method !== 'POST') return notFoundPage(deps, call);
  // A session change's target is the user its form names: a refusal from here on (a forged CSRF token, a viewer,
  // no such session) says so.
  const form = await checkedForm(deps, call, operator, (read) => {
    if (parts[0] === 'sessions') name({ action: `${method} ${sub}`, target: formTarget(read) });
  });
  if (operator.role !== 'admin') throw new ConsoleRefusal('viewer');
  if (parts[0] === 'apps') return appsAction(deps, call, parts.slice(1).map(decodePart), form);
  if (parts[0] === 'keys') return keysAction(deps, call, parts.slice(1).map(decodePart), form);
  if (parts[0] === 'sessions') return sessionsAction(deps, call, parts.slice(1).map(decodePart), form);
  return notFoundPage(deps, call);
}

/**
 * The request's console session while the device session and grant it came from stand (session-origin.ts). One
 * whose origin was ended (signed out, sessions ended, the console disconnected) is deleted and reads as none. A
 * failing read rejects: the request fails closed.
 */
async function liveOperatorSession(deps: ConsoleDeps, request: SentinelRequest): Promise<StoredOperatorSession | null> {
  const stored = await readOperatorSession(deps.context.store, request);
  if (stored === null) return null;
  if (!(await originStands(deps.context, stored))) {
    await endOperatorSession(deps.context.store, request);
    return null;
  }
  // Only a session whose origin stands is extended: one that has just ended is not kept a moment longer.
  return useOperatorSession(deps.context.store, request, { absolute: deps.sessionTtl, idle: deps.idleTtl });
}

function decodePart(part: string | undefined): string {
  try {
    return decodeURIComponent(part ?? '');
  } catch {
    return '';
  }
}

async function callback(deps: ConsoleDeps, call: ConsoleCall, location: ConsoleLocation, sessionTtl: number): Promise<SentinelResponse> {
  const signedIn = await finishSignIn(deps.service, deps.context, location, call.request);
  if (signedIn === null) {
    return consolePage(deps.service.config, call, {
      title: text(call, 'errorTitle'),
      content: `<p class="error" role="alert">${escapeHTML(text(call, 'signInFailed'))}</p><p><a href="${escapeHTML(`${call.base}/`)}">${escapeHTML(text(call, 'signInAgain'))}</a></p>`,
      status: 400,
    });
  }
  // Someone signed in in this browser: the console session its cookie named ends, not only its cookie replaced (a
  // copy would open the console as before, and no Sign out here would reach it).
  await endOperatorSession(deps.context.store, call.request);
  const role = await deps.options.authorize({ accountId: signedIn.accountId, userId: signedIn.userId });
  if (role !== 'admin' && role !== 'viewer') {
    scopedContext(deps, call.request).emit({
      type: 'console.denied',
      accountId: signedIn.accountId,
      operator: signedIn.userId,
      action: 'sign-in',
      reason: 'not_operator',
    });
    // No console session for someone who is not an operator: nothing stored (a signed-in user repeating sign-ins would
    // otherwise fill console-session:, evicting operators' sessions from MemoryStore), only the binding removed.
    const page = notOperatorPage(deps, call, signedIn.accountId);
    return { ...page, headers: { ...page.headers, 'set-cookie': [spentSignInCookie(location)] } };
  }
  const signedInEvent = { type: 'console.signed_in', accountId: signedIn.accountId, operator: signedIn.userId, role } as const;
  const cookies = await openOperatorSession(deps.context.store, location, signedIn, { absolute: sessionTtl, idle: deps.idleTtl }, () =>
    scopedContext(deps, call.request).emit(signedInEvent),
  );
  return redirect(303, `${call.base}/${encodeURIComponent(signedIn.accountId)}/apps`, { 'set-cookie': cookies });
}

function chooserPage(deps: ConsoleDeps, call: ConsoleCall): SentinelResponse {
  const content = `${paragraph(text(call, 'chooseAccountLead'), 'lead')}
<form method="get" action="${escapeHTML(`${call.base}/sign-in`)}">
<label for="account">${escapeHTML(text(call, 'accountLabel'))}</label>
<input id="account" name="account" required maxlength="256" autocomplete="off">
<div class="actions"><button type="submit" class="primary">${escapeHTML(text(call, 'continue'))}</button></div>
</form>`;
  return consolePage(deps.service.config, call, { title: text(call, 'chooseAccountTitle'), content });
}

function notOperatorPage(deps: ConsoleDeps, call: ConsoleCall, accountId: string): SentinelResponse {
  return consolePage(deps.service.config, call, {
    title: text(call, 'notOperatorTitle'),
    content: `<p class="error" role="alert">${textHTML(call, 'notOperatorLead', { account: accountId })}</p>`,
    status: 403,
  });
}

function notFoundPage(deps: ConsoleDeps, call: ConsoleCall, status: 404 | 405 = 404): SentinelResponse {
  return consolePage(deps.service.config, call, {
    title: text(call, 'errorTitle'),
    content: `<p><a href="${escapeHTML(`${call.base}/`)}">${escapeHTML(text(call, 'back'))}</a></p>`,
    status,
    ...(status === 405 ? { headers: { allow: 'GET, POST' } } : {}),
  });
}
