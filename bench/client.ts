/**
 * The load-generator side of the client-credentials and guard workloads: the request autocannon sends and the check
 * of a first response (a 200 with a JWT whose signature verifies against the run's public key), plus the sign-in
 * through sentinel-idp's login page that gives the code-flow rows (bench/flow-client.ts) a device session.
 */
import type { AutocannonOptions } from 'autocannon';
import { decodeProtectedHeader, importJWK, type JWK, jwtVerify } from 'jose';
import {
  ACCOUNT_ID,
  ACCOUNT_TOKEN_PATH,
  AGENT_RESOURCE,
  CC_BODY,
  checkTimeout,
  DEVICE_CODE_GRANT,
  CLIENT_ID,
  CLIENT_SECRET,
  CONSUMER_ID,
  FORM_CONTENT_TYPE,
  HOST,
  OIDC_RESOURCE,
  PASSWORD,
  redirectUriFor,
  TOKEN_PATH,
  USERNAME,
} from './fixtures.js';
import { CookieJar } from './cookie-jar.js';
import { type BrandAssertions, isJwtBearer } from './brand-assertions.js';
import type { DeviceCodes } from './device-codes.js';
import type { GuardTokens } from './guard-tokens.js';
import type { Workload } from './registry.js';
import { checkTokenUse, isTokenUse, type TokenPool, tokenUseOptions } from './token-use-client.js';

/** A row that cannot run because the code under test is not there (yet): reported, not a crash. */
export class NotAvailable extends Error {}

export interface LoadSettings {
  connections: number;
  timeoutSeconds: number;
  /**
   * HTTP/1.1 pipelining depth of the guard rows (every guard row alike). Their servers answer in tens of µs, and
   * autocannon's own cost per request on the shared cores bounded every guard at about the same req/s (README.md).
   */
  guardPipelining?: number;
  /** Overall requests per second across all connections (autocannon `overallRate`); absent: unpaced. */
  rate?: number;
}

/** What a workload needs beyond the port (the code-flow rows keep their state in bench/flow-client.ts). */
export interface WorkloadState {
  port: number;
  /** The guard rows' tokens (one for guard-one, 20,000 for guard-20k), used round-robin. */
  guard?: GuardTokens;
  /** The brand JWT exchange rows' request bodies, one brand JWT each, used in order. */
  brand?: BrandAssertions;
  /** The device-poll rows' pending device codes, polled in turn. */
  device?: DeviceCodes;
  /** The UserInfo, introspection and delegation rows' tokens, presented in turn (bench/token-pools.ts). */
  tokens?: TokenPool;
}

const CC_PATH = `${TOKEN_PATH}?state=${CONSUMER_ID}`;
const OIDC_BODY = new URLSearchParams({
  grant_type: 'client_credentials',
  client_id: CLIENT_ID,
  client_secret: CLIENT_SECRET,
  resource: OIDC_RESOURCE,
}).toString();

/** Client credentials with a resource, client_secret_post: the same body for both servers. */
const RESOURCE_CC_BODY = new URLSearchParams({
  grant_type: 'client_credentials',
  client_id: CLIENT_ID,
  client_secret: CLIENT_SECRET,
  resource: AGENT_RESOURCE,
}).toString();

/** Whether a workload polls device codes (its answers are 400 authorization_pending). */
export function isDevicePoll(workload: Workload): workload is 'device-poll' | 'oidc-device-poll' {
  return workload === 'device-poll' || workload === 'oidc-device-poll';
}

function devicePollBody(code: string): string {
  return new URLSearchParams({
    grant_type: DEVICE_CODE_GRANT,
    device_code: code,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  }).toString();
}

export function baseUrl(port: number): string {
  return `http://${HOST}:${port}`;
}

/** The status every response of the client-credentials and guard workloads must have (code flows: flow-client.ts). */
export function expectedStatus(workload: Workload): number {
  return isDevicePoll(workload) ? 400 : 200;
}

/** autocannon options of a workload (without duration/amount). */
export function loadOptions(workload: Workload, state: WorkloadState, settings: LoadSettings): AutocannonOptions {
  const common = {
    url: baseUrl(state.port),
    connections: settings.connections,
    pipelining: 1,
    timeout: settings.timeoutSeconds,
    ...(settings.rate ? { overallRate: settings.rate } : {}),
  };
  switch (workload) {
    case 'cc':
      return {
        ...common,
        method: 'POST',
        requests: [{ method: 'POST', path: CC_PATH, headers: { 'content-type': FORM_CONTENT_TYPE }, body: CC_BODY }],
      };
    case 'jwt-bearer-rs256':
    case 'jwt-bearer-es256': {
      const brand = state.brand;
      if (brand === undefined) throw new Error('jwt-bearer rows need brand assertions');
      return {
        ...common,
        method: 'POST',
        requests: [
          {
            method: 'POST',
            path: ACCOUNT_TOKEN_PATH,
            headers: { 'content-type': FORM_CONTENT_TYPE },
            // A jti is single use: each request carries the next brand JWT (minted before the round).
            setupRequest: (request) => ({ ...request, body: brand.bodies[brand.next++ % brand.bodies.length] }),
          },
        ],
      };
    }
    case 'oidc-cc':
      return {
        ...common,
        method: 'POST',
        requests: [{ method: 'POST', path: '/token', headers: { 'content-type': FORM_CONTENT_TYPE }, body: OIDC_BODY }],
      };
    case 'rcc':
    case 'oidc-rcc':
      return {
        ...common,
        method: 'POST',
        requests: [
          {
            method: 'POST',
            path: workload === 'rcc' ? ACCOUNT_TOKEN_PATH : '/token',
            headers: { 'content-type': FORM_CONTENT_TYPE },
            body: RESOURCE_CC_BODY,
          },
        ],
      };
    case 'device-poll':
    case 'oidc-device-poll': {
      const device = state.device;
      if (device === undefined) throw new Error('device-poll rows need device codes');
      const path = workload === 'device-poll' ? ACCOUNT_TOKEN_PATH : '/token';
      return {
        ...common,
        method: 'POST',
        requests: [
          {
            method: 'POST',
            setupRequest: (request) => {
              const code = device.codes[device.next++ % device.codes.length] as string;
              return { ...request, path, headers: { 'content-type': FORM_CONTENT_TYPE }, body: devicePollBody(code) };
            },
          },
        ],
      };
    }
    case 'userinfo':
    case 'oidc-userinfo':
    case 'introspect':
    case 'oidc-introspect':
    case 'delegation':
      return tokenUseOptions(workload, state.tokens, common);
    case 'authorize':
    case 'exchange':
    case 'refresh':
    case 'oidc-authorize':
    case 'oidc-exchange':
    case 'oidc-refresh':
      throw new Error(`${workload} is driven by bench/flow-client.ts`);
    case 'guard-one':
    case 'guard-20k': {
      const guard = state.guard;
      if (guard === undefined) throw new Error('guard rows need tokens');
      const pipelined = { ...common, pipelining: settings.guardPipelining ?? 1 };
      // One token: the same bytes on every request, so autocannon builds the request once instead of per request.
      if (workload === 'guard-one') {
        return {
          ...pipelined,
          requests: [{ method: 'GET', path: guard.paths[0], headers: { authorization: `Bearer ${guard.tokens[0]}` } }],
        };
      }
      return {
        ...pipelined,
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => {
              const index = guard.next++ % guard.tokens.length;
              return { ...request, path: guard.paths[index], headers: { authorization: `Bearer ${guard.tokens[index]}` } };
            },
          },
        ],
      };
    }
  }
}

/** Verifies an access token: ES256 signature with the run's key, typ at+jwt, and the claims each workload implies. */
async function verifyAccessToken(workload: Workload, token: unknown, publicJwk: JWK): Promise<string> {
  if (typeof token !== 'string') throw new Error('no access_token string in the response');
  const header = decodeProtectedHeader(token);
  if (header.alg !== 'ES256') throw new Error(`token alg ${String(header.alg)}, expected ES256`);
  if (header.typ !== 'at+jwt') throw new Error(`token typ ${String(header.typ)}, expected at+jwt`);
  const key = await importJWK(publicJwk, 'ES256');
  const { payload } = await jwtVerify(token, key, { algorithms: ['ES256'] });
  const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  const problems: string[] = [];
  if (payload.client_id !== CLIENT_ID) problems.push(`client_id ${String(payload.client_id)}`);
  if (typeof payload.iat !== 'number' || typeof payload.exp !== 'number') problems.push('iat/exp missing');
  if (typeof payload.jti !== 'string') problems.push('jti missing');
  if (workload === 'cc' || isJwtBearer(workload)) {
    // The brand JWT's token is the v2 token exactly (issue 32): the same claims are checked.
    if (payload.sub !== CONSUMER_ID) problems.push(`sub ${String(payload.sub)} (expected the consumer id)`);
    if (!aud.includes(ACCOUNT_ID)) problems.push(`aud ${String(payload.aud)} (expected the account id)`);
    if (payload.azp !== CLIENT_ID) problems.push(`azp ${String(payload.azp)}`);
    if (payload.exp !== undefined && payload.iat !== undefined && payload.exp - payload.iat !== 3600) problems.push('exp - iat ≠ 3600');
  } else if (workload === 'oidc-cc') {
    if (!aud.includes(OIDC_RESOURCE)) problems.push(`aud ${String(payload.aud)} (expected the resource)`);
  } else if (workload === 'rcc' || workload === 'oidc-rcc') {
    // Bound to the MCP server and to nothing else: the account's own API must not take it.
    if (aud.length !== 1 || aud[0] !== AGENT_RESOURCE) problems.push(`aud ${String(payload.aud)} (expected the resource only)`);
  }
  if (problems.length > 0) throw new Error(`access token claims wrong: ${problems.join(', ')}`);
  return `ES256 at+jwt, claims ${Object.keys(payload).sort().join(',')}`;
}

/** Sends one request of the workload and checks the answer thoroughly. Returns a one-line description. */
export async function checkFirstResponse(workload: Workload, state: WorkloadState, publicJwk: JWK): Promise<string> {
  if (isTokenUse(workload)) return checkTokenUse(workload, state.port, state.tokens, publicJwk);
  const options = loadOptions(workload, state, { connections: 1, timeoutSeconds: 10 });
  const template = options.requests?.[0];
  if (template === undefined) throw new Error('no request template');
  const request = template.setupRequest ? (template.setupRequest({ ...template }, {}) ?? template) : template;
  const response = await fetch(baseUrl(state.port) + (request.path ?? '/'), {
    method: request.method ?? 'GET',
    headers: request.headers ?? {},
    body: request.body === undefined ? undefined : String(request.body),
    redirect: 'manual',
    signal: checkTimeout(),
  });
  const text = await response.text();
  const expected = expectedStatus(workload);
  if (response.status !== expected) {
    const detail = `${response.status} ${text.slice(0, 200).replace(/\s+/g, ' ')}`;
    if (response.status === 404) throw new NotAvailable(`endpoint answers 404 (${detail})`);
    throw new Error(`first response: expected ${expected}, got ${detail}`);
  }
  if (workload === 'guard-one' || workload === 'guard-20k') return checkGuard(state, text);
  const contentType = response.headers.get('content-type') ?? '';
  if (!/^application\/json/i.test(contentType)) throw new Error(`content-type ${contentType}`);
  if (!/no-store/i.test(response.headers.get('cache-control') ?? '')) throw new Error('no Cache-Control: no-store');
  const body = JSON.parse(text) as Record<string, unknown>;
  if (isDevicePoll(workload)) {
    if (body.error !== 'authorization_pending') throw new Error(`first poll answered ${text.slice(0, 200)}`);
    return `400 authorization_pending (${state.device?.codes.length ?? 0} pending device codes in turn)`;
  }
  if (String(body.token_type).toLowerCase() !== 'bearer') throw new Error(`token_type ${String(body.token_type)}`);
  return `200, ${await verifyAccessToken(workload, body.access_token, publicJwk)}, expires_in ${JSON.stringify(body.expires_in)}`;
}

export function codeFromLocation(location: string, port: number): string | null {
  if (!location.startsWith(redirectUriFor(port))) return null;
  try {
    return new URL(location).searchParams.get('code');
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Login flow: authorize without a session → login page → POST credentials → back to authorize → session cookie.

function decodeEntities(value: string): string {
  return value
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function attributes(tag: string): Map<string, string> {
  const result = new Map<string, string>();
  for (const match of tag.matchAll(/([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*(?:=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g)) {
    const name = (match[1] ?? '').toLowerCase();
    result.set(name, decodeEntities(match[2] ?? match[3] ?? match[4] ?? ''));
  }
  return result;
}

interface LoginForm {
  action: string | undefined;
  fields: URLSearchParams;
}

function parseLoginForm(html: string, user: string): LoginForm {
  const formTag = /<form\b[^>]*>/i.exec(html)?.[0];
  if (formTag === undefined) throw new Error('login page has no <form>');
  const action = attributes(formTag.slice(5)).get('action');
  const fields = new URLSearchParams();
  let username: string | undefined;
  let password: string | undefined;
  for (const match of html.matchAll(/<input\b([^>]*)>/gi)) {
    const attrs = attributes(match[1] ?? '');
    const name = attrs.get('name');
    if (!name) continue;
    const type = (attrs.get('type') ?? 'text').toLowerCase();
    if (type === 'password') password ??= name;
    else if ((type === 'text' || type === 'email') && username === undefined) username = name;
    else if (type === 'hidden') fields.set(name, attrs.get('value') ?? '');
  }
  if (username === undefined || password === undefined) throw new Error('login form without username/password inputs');
  fields.set(username, user);
  fields.set(password, PASSWORD);
  return { action: action || undefined, fields };
}

/**
 * Logs the bench user in through the login page, starting from the authorization request `authorizePath`, and
 * returns the Cookie header carrying the device session.
 */
export async function login(port: number, authorizePath: string): Promise<string> {
  return (await signIn(port, authorizePath)).cookie;
}

/**
 * {@link login} as `username`, also returning the code the sign-in ended with (bench/redis-sizing.ts redeems it, so
 * that every signed-in user holds a grant as well as a session).
 */
export async function signIn(port: number, authorizePath: string, username = USERNAME): Promise<{ cookie: string; code: string }> {
  const base = baseUrl(port);
  const jar = new CookieJar();
  const get = (url: URL) => fetch(url, { redirect: 'manual', headers: { cookie: jar.header() }, signal: checkTimeout() });

  let url = new URL(authorizePath, base);
  let response = await get(url);
  jar.absorb(response);
  if (response.status === 404) throw new NotAvailable('authorize endpoint answers 404');
  if (response.status !== 302 && response.status !== 303) {
    throw new NotAvailable(`authorize without a session answered ${response.status}, expected a redirect to the login page`);
  }
  url = new URL(response.headers.get('location') ?? '', url);
  response = await get(url);
  jar.absorb(response);
  const html = await response.text();
  if (response.status !== 200) throw new NotAvailable(`login page answered ${response.status}`);
  const form = parseLoginForm(html, username);
  const action = new URL(form.action ?? url.href, url);
  response = await fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: jar.header(), 'content-type': FORM_CONTENT_TYPE },
    body: form.fields.toString(),
    signal: checkTimeout(),
  });
  jar.absorb(response);
  for (let hop = 0; hop < 5; hop++) {
    if (response.status !== 302 && response.status !== 303) {
      throw new Error(`login flow: unexpected ${response.status} at ${url.pathname}`);
    }
    const location = response.headers.get('location') ?? '';
    const next = new URL(location, url);
    const code = codeFromLocation(next.href, port);
    if (code !== null) return { cookie: jar.header(), code };
    url = next;
    response = await get(url);
    jar.absorb(response);
  }
  throw new Error('login flow did not end at the redirect URI with a code');
}

/**
 * The guard rows' check: the first answer names the token's consumer, and the same guard refuses (401) a token
 * with an altered signature and a valid token presented for another consumer, so no row is fast by not checking.
 */
async function checkGuard(state: WorkloadState, text: string): Promise<string> {
  const guard = state.guard as GuardTokens;
  const token = guard.tokens[0] as string;
  const path = guard.paths[0] as string;
  const consumer = path.split('/')[5];
  if ((JSON.parse(text) as { consumer?: string }).consumer !== consumer) throw new Error(`guard answered ${text.slice(0, 200)}`);
  const refused = async (what: string, requestPath: string, presented: string): Promise<void> => {
    const response = await fetch(baseUrl(state.port) + requestPath, {
      headers: { authorization: `Bearer ${presented}` },
      signal: checkTimeout(),
    });
    await response.arrayBuffer();
    if (response.status !== 401) throw new Error(`${what}: expected 401, got ${response.status}`);
  };
  const signature = token.slice(token.lastIndexOf('.') + 1);
  const altered = `${token.slice(0, token.lastIndexOf('.') + 1)}${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
  await refused('altered signature', path, altered);
  await refused('another consumer', path.replace(consumer as string, '00000000-0000-4000-8000-000000000000'), token);
  guard.next = 0;
  return `200 with the consumer; 401 for an altered signature and for another consumer (${guard.tokens.length} token(s))`;
}
