/**
 * Driving the core directly through `sentinel.handle()` (no HTTP): the browser flow (authorize → login page →
 * sign-in → code), the token endpoint, and a Store wrapper that records every write. Used by the hostile-input,
 * flood, concurrency, audit and fuzz suites, where speed matters and the exact request shape must be controlled.
 */
import { expect } from 'vitest';
import type { Sentinel, SentinelRequest, SentinelResponse, Store } from '../../src/index.js';
import { ACCOUNT, appTokenPath, basic, CLIENT_ID, CLIENT_SECRET, PASSWORD, REDIRECT_URI, USERNAME } from './fixtures.js';
import { pkcePair } from './pkce.js';

export const FORM = 'application/x-www-form-urlencoded';
export const ACCOUNT_PATH = `/sentinel/api/account/${ACCOUNT}`;
export const AUTHORIZE_PATH = `${ACCOUNT_PATH}/authorize`;
export const LOGIN_PATH = `${ACCOUNT_PATH}/login`;
export const TOKEN_PATH = `${ACCOUNT_PATH}/token`;

/** A request as the tests write it; `query` may be a raw string (parsed like a URL's query). */
export interface DirectRequest {
  method?: string;
  path: string;
  query?: string | URLSearchParams;
  headers?: SentinelRequest['headers'];
  body?: SentinelRequest['body'];
  ip?: string;
}

/** Calls `sentinel.handle()` and insists that the path is the service's. */
export async function call(sentinel: Sentinel, input: DirectRequest): Promise<SentinelResponse> {
  // A path may carry its query ('/…/app/token?state=…'), as fixtures' appTokenPath() builds it.
  const [path, inPath] = input.path.split('?', 2) as [string, string | undefined];
  const raw = input.query ?? inPath ?? '';
  const query = typeof raw === 'string' ? new URLSearchParams(raw) : raw;
  const response = await sentinel.handle({
    method: input.method ?? 'GET',
    path,
    query,
    headers: input.headers ?? {},
    body: input.body,
    ip: input.ip ?? '203.0.113.7',
  });
  expect(response, `${input.path} is a route of the service`).not.toBeNull();
  return response as SentinelResponse;
}

/** Posts a form (raw string, bytes or a pre-parsed object) to a path. */
export function postForm(
  sentinel: Sentinel,
  path: string,
  body: SentinelRequest['body'],
  extra: Omit<DirectRequest, 'path' | 'body'> = {},
): Promise<SentinelResponse> {
  return call(sentinel, { method: 'POST', path, body, ...extra, headers: { 'content-type': FORM, ...extra.headers } });
}

/** The query of a valid authorize request of the confidential client. */
export function authorizeQuery(overrides: Record<string, string> = {}): URLSearchParams {
  return new URLSearchParams({ response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, state: 'st-1', ...overrides });
}

/** Every `Set-Cookie` line of a response. */
export function setCookies(response: SentinelResponse): string[] {
  const value = response.headers['set-cookie'];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** The hidden CSRF token of a login page. */
/**
 * The `Cookie` header the browser sends back after a password that parks the sign-in at a step: the step cookie
 * that ties the sign-in to it.
 */
export function stepCookie(response: SentinelResponse): string {
  // The tie's own line: a response that ties a step may also remove older step cookies (`name=; Expires=…1970`).
  const line = setCookies(response).find((entry) => /^sentinel_session_step_[^=]+=[^;]/.test(entry));
  expect(line, 'the password step ties the sign-in to this browser').toBeDefined();
  return (line as string).split(';')[0] as string;
}

export function csrfOf(html: string | undefined): string {
  const token = /name="csrf_token" value="([^"]+)"/.exec(html ?? '')?.[1];
  expect(token, 'the login page has a csrf_token field').toBeTruthy();
  return token as string;
}

/** What one completed browser sign-in produced (everything secret in it is listed for the audit scan). */
export interface SignedIn {
  code: string;
  verifier: string;
  interaction: string;
  csrf: string;
  sessionCookie: string;
  location: string;
}

/** GET /authorize without a session: the login path and its interaction id. */
export async function startInteraction(
  sentinel: Sentinel,
  query: URLSearchParams = authorizeQuery(),
  ip?: string,
): Promise<{ loginPath: string; interaction: string }> {
  const response = await call(sentinel, { path: AUTHORIZE_PATH, query, ip });
  expect(response.status).toBe(302);
  const location = String(response.headers.location);
  const interaction = /[?&]interaction=([A-Za-z0-9_-]{43})$/.exec(location)?.[1];
  expect(interaction, `a login redirect, got ${location}`).toBeTruthy();
  return { loginPath: location.split('?')[0] as string, interaction: interaction as string };
}

/** Opens the login page of an interaction and returns its CSRF token. */
export async function openLogin(sentinel: Sentinel, interaction: string): Promise<string> {
  const page = await call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }) });
  expect(page.status).toBe(200);
  return csrfOf(page.body);
}

/** Posts the login form of an interaction; `cookie` is what the browser sends (its step cookie, say). */
export function postLogin(
  sentinel: Sentinel,
  interaction: string,
  form: Record<string, string>,
  ip?: string,
  cookie?: string,
): Promise<SentinelResponse> {
  return postForm(sentinel, LOGIN_PATH, new URLSearchParams(form).toString(), {
    query: new URLSearchParams({ interaction }),
    ip,
    ...(cookie === undefined ? {} : { headers: { cookie } }),
  });
}

/** The whole no-session browser flow with PKCE, up to the code in the 303 back to the app. */
export async function signIn(sentinel: Sentinel, credentials = { username: USERNAME, password: PASSWORD }): Promise<SignedIn> {
  const { verifier, challenge } = pkcePair();
  const { interaction } = await startInteraction(sentinel, authorizeQuery({ code_challenge: challenge, code_challenge_method: 'S256' }));
  const csrf = await openLogin(sentinel, interaction);
  const response = await postLogin(sentinel, interaction, { csrf_token: csrf, ...credentials });
  expect(response.status).toBe(303);
  const location = String(response.headers.location);
  const code = new URL(location).searchParams.get('code');
  expect(code, `a code in ${location}`).toBeTruthy();
  const session = setCookies(response).find((line) => line.startsWith('sentinel_session='));
  expect(session, 'a session cookie').toBeTruthy();
  const sessionCookie = (session as string).slice('sentinel_session='.length).split(';')[0] as string;
  return { code: code as string, verifier, interaction, csrf, sessionCookie, location };
}

/** Exchanges a code at the token endpoint (confidential client, body authentication). */
export function exchangeCode(sentinel: Sentinel, code: string, verifier: string): Promise<SentinelResponse> {
  return postForm(
    sentinel,
    TOKEN_PATH,
    new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT_URI,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    }).toString(),
  );
}

/** Uses a refresh token (confidential client, body authentication). */
export function useRefreshToken(sentinel: Sentinel, refreshToken: string): Promise<SentinelResponse> {
  return postForm(
    sentinel,
    TOKEN_PATH,
    new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    }).toString(),
  );
}

/**
 * A consumer-bound access token of the fixture app (client credentials at the v2 app-token path, HTTP Basic), for
 * suites that only need a token signed by the current key.
 *
 * @example const token = await consumerToken(sentinel);
 */
export async function consumerToken(sentinel: Sentinel): Promise<string> {
  const response = await postForm(sentinel, appTokenPath(), 'grant_type=client_credentials', {
    headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET) },
  });
  expect(response.status, response.body).toBe(200);
  return jsonOf(response).access_token as string;
}

/** The JSON body of a response. */
export function jsonOf(response: SentinelResponse): Record<string, unknown> {
  return JSON.parse(response.body ?? 'null') as Record<string, unknown>;
}

/** One write a {@link RecordingStore} saw. */
export interface StoreWrite {
  op: 'set' | 'take' | 'delete' | 'increment' | 'swap';
  key: string;
}

/** A Store that forwards to another and records every write (set, a successful take, delete, increment). */
export interface RecordingStore extends Store {
  readonly writes: StoreWrite[];
  /** Forgets the writes seen so far. */
  reset(): void;
}

/** Wraps `inner` so every write is recorded; reads (and takes that find nothing) pass through. */
export function recordingStore(inner: Store): RecordingStore {
  const writes: StoreWrite[] = [];
  return {
    writes,
    reset: () => {
      writes.length = 0;
    },
    get: (key) => inner.get(key),
    set: (key, value, ttlMs) => {
      writes.push({ op: 'set', key });
      return inner.set(key, value, ttlMs);
    },
    // A take that finds nothing changes nothing (an unknown code is looked up this way); one that finds a value deletes it.
    take: async (key) => {
      const value = await inner.take(key);
      if (value !== null) writes.push({ op: 'take', key });
      return value;
    },
    // A swap that applies writes each of its keys; one that does not changes nothing.
    swap: async (entries) => {
      const applied = await inner.swap(entries);
      if (applied) for (const entry of entries) writes.push({ op: 'swap', key: entry.key });
      return applied;
    },
    delete: (key) => {
      writes.push({ op: 'delete', key });
      return inner.delete(key);
    },
    increment: (key, ttlMs) => {
      writes.push({ op: 'increment', key });
      return inner.increment(key, ttlMs);
    },
  };
}
