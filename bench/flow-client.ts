/**
 * The load-generator side of the code-flow rows, the same for sentinel-idp and oidc-provider: a session obtained
 * through each server's own sign-in, authorization requests answered 302 with a code, code exchanges (+ PKCE) of
 * codes minted before the window (one fresh code per request), and refresh rotations in chains (every request
 * presents the refresh token the previous response of its chain returned). The first responses are checked
 * thoroughly: signatures and claims of the access token and the ID token, a refresh token, a code in the redirect.
 */
import { createHash } from 'node:crypto';
import autocannon, { type AutocannonOptions, type AutocannonResult } from 'autocannon';
import { importJWK, type JWK, jwtVerify } from 'jose';
import { codeFromLocation, type LoadSettings, login as sentinelLogin, signIn } from './client.js';
import { CookieJar } from './cookie-jar.js';
import {
  ACCOUNT_ID,
  CLIENT_ID,
  CLIENT_SECRET,
  CODE_VERIFIER,
  FORM_CONTENT_TYPE,
  HOST,
  USERNAME,
  checkTimeout,
  issuerFor,
  OIDC_RESOURCE,
  redirectUriFor,
} from './fixtures.js';

/** The flow workloads; the `oidc-` ones speak to oidc-provider's endpoints. */
export type FlowWorkload = 'authorize' | 'exchange' | 'refresh' | 'oidc-authorize' | 'oidc-exchange' | 'oidc-refresh';

const FLOW_WORKLOADS: ReadonlySet<string> = new Set([
  'authorize',
  'exchange',
  'refresh',
  'oidc-authorize',
  'oidc-exchange',
  'oidc-refresh',
]);

export function isFlowWorkload(workload: string): workload is FlowWorkload {
  return FLOW_WORKLOADS.has(workload);
}

/** Both servers are asked for the same scope: an ID token, a refresh token, and the resource server's scope. */
const SCOPE = 'openid offline_access api:read';
const CODE_CHALLENGE = createHash('sha256').update(CODE_VERIFIER).digest('base64url');
const STATE = 'bench-state-0123456789abcdefghijkl';
const NONCE = 'bench-nonce-0123456789abcdefghijkl';

interface Dialect {
  oidc: boolean;
  authorizePath(port: number): string;
  tokenPath: string;
  login(port: number): Promise<string>;
  /** Signs `username` in; oidc-provider's interaction signs in its one account whatever the name. */
  loginAs(port: number, username: string): Promise<string>;
}

/** The authorization request's query, the same for both servers. */
function authorizeQuery(port: number): string {
  return new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: redirectUriFor(port),
    scope: SCOPE,
    state: STATE,
    nonce: NONCE,
    code_challenge: CODE_CHALLENGE,
    code_challenge_method: 'S256',
  }).toString();
}

const SENTINEL: Dialect = {
  oidc: false,
  authorizePath: (port) => `/sentinel/api/account/${ACCOUNT_ID}/authorize?${authorizeQuery(port)}`,
  tokenPath: `/sentinel/api/account/${ACCOUNT_ID}/token`,
  login: (port) => sentinelLogin(port, SENTINEL.authorizePath(port)),
  loginAs: async (port, username) => (await signIn(port, SENTINEL.authorizePath(port), username)).cookie,
};

/** sentinel-idp's authorization request of the flow rows (bench/redis-sizing.ts signs its users in with it). */
export function sentinelAuthorizePath(port: number): string {
  return SENTINEL.authorizePath(port);
}

const OIDC: Dialect = {
  oidc: true,
  authorizePath: (port) => `/auth?${authorizeQuery(port)}`,
  tokenPath: '/token',
  login: oidcLogin,
  loginAs: (port) => oidcLogin(port),
};

/** Signs in to oidc-provider through its interaction route (which completes sign-in and consent) and returns the cookies. */
async function oidcLogin(port: number): Promise<string> {
  const jar = new CookieJar();
  let url = new URL(OIDC.authorizePath(port), `http://${HOST}:${port}`);
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() }, signal: checkTimeout() });
    jar.absorb(response);
    await response.arrayBuffer();
    if (response.status < 300 || response.status > 303) throw new Error(`oidc-provider sign-in: ${response.status} at ${url.pathname}`);
    url = new URL(response.headers.get('location') ?? '', url);
    if (codeFromLocation(url.href, port) !== null) return jar.header();
  }
  throw new Error('oidc-provider sign-in did not end at the redirect URI with a code');
}

function dialectOf(workload: FlowWorkload): Dialect {
  return workload.startsWith('oidc-') ? OIDC : SENTINEL;
}

function kindOf(workload: FlowWorkload): 'authorize' | 'exchange' | 'refresh' {
  return workload.replace(/^oidc-/, '') as 'authorize' | 'exchange' | 'refresh';
}

/**
 * The status every response of the workload must have: sentinel-idp answers an authorization request with 302,
 * oidc-provider with 303 (both deliver the code in Location).
 */
export function flowExpectedStatus(workload: FlowWorkload): number {
  if (kindOf(workload) !== 'authorize') return 200;
  return dialectOf(workload).oidc ? 303 : 302;
}

/**
 * Refresh chains started through one session, and access tokens taken from one (`accessTokens`): sentinel-idp's
 * default `session.maxGrantsPerApp`.
 */
const CHAINS_PER_SESSION = 16;

/**
 * Codes the exchange rows mint through one device session, each session a different user's. A user's code exchange
 * adds its grant to the user's session index and ends none; the bench's one session of earlier rows gathered
 * `session.maxGrantsPerApp` (16) grants, after which every exchange also ended the oldest (a store delete, an event
 * and a 1.2 kB index rewritten), and all its exchanges contended on one user's index. At most 16 per session, minted
 * in turn across the sessions, keeps each exchange a different user's and within the bound.
 */
const CODES_PER_SESSION = 16;
/** Sign-ins in flight while the exchange rows sign their users in (before the window). */
const SIGN_IN_CONCURRENCY = 16;

type Fire = (options: AutocannonOptions, what: string) => Promise<AutocannonResult>;

/**
 * One round of a flow workload against one server: `prepare` signs in, mints what the first check needs and checks
 * it; `warmUp` runs the warm-up; `measureOptions` gives what the measured window sends (minting outside the window).
 */
export class FlowLoad {
  readonly #workload: FlowWorkload;
  readonly #kind: 'authorize' | 'exchange' | 'refresh';
  readonly #dialect: Dialect;
  readonly #port: number;
  readonly #load: LoadSettings;
  #cookie = '';
  #codes: string[] = [];
  #nextCode = 0;
  /** The last numbered user signed in (`bench-user-1`, …): each session of the exchange rows is a new user's. */
  #users = 0;
  /** Refresh tokens waiting for their chain's next request; every response puts its new one back. */
  readonly #refreshQueue: string[] = [];
  #lastResponseAt: bigint | undefined;

  constructor(workload: FlowWorkload, port: number, load: LoadSettings) {
    this.#workload = workload;
    this.#kind = kindOf(workload);
    this.#dialect = dialectOf(workload);
    this.#port = port;
    this.#load = load;
  }

  /** Amount-bound windows (the exchange) end on autocannon's 1-second tick: measure them to the last response. */
  get lastResponseAt(): bigint | undefined {
    return this.#kind === 'exchange' ? this.#lastResponseAt : undefined;
  }

  async prepare(publicJwk: JWK): Promise<string> {
    this.#cookie = await this.#dialect.login(this.#port);
    if (this.#kind === 'authorize') return this.#checkAuthorize();
    const [code] = await this.mintCodes(1);
    const first = await this.#checkTokens(this.exchangeBody(code as string), publicJwk);
    if (this.#kind === 'exchange') return first.description;
    const refreshed = await this.#checkTokens(refreshBody(first.refreshToken), publicJwk);
    // The rotated-away token must now be refused: the row rotates for real.
    const replay = await this.#post(refreshBody(first.refreshToken));
    if (replay.status !== 400) throw new Error(`a rotated refresh token answered ${replay.status}, expected 400`);
    // Chains start from freshly exchanged refresh tokens. Each autocannon instance takes one per connection when it
    // starts and may strand up to one per connection when it stops (a rotation whose answer it no longer reads), so
    // the warm-up and the window together need more than twice as many chains as connections.
    const seeds: string[] = [];
    while (seeds.length < this.#load.connections * 3) {
      // From new sessions: oidc-provider revokes the whole grant on the replay above, and its codes of one session
      // share one grant; sentinel-idp keeps the newest `session.maxGrantsPerApp` (16) grants of an app per session
      // and ends the older ones, so each session starts at most that many chains (as many users would).
      this.#cookie = await this.#dialect.login(this.#port);
      seeds.push(...(await this.mintCodes(Math.min(CHAINS_PER_SESSION, this.#load.connections * 3 - seeds.length))));
    }
    for (const seed of seeds) {
      const response = await this.#post(this.exchangeBody(seed));
      this.#refreshQueue.push(refreshTokenOf(response.body));
    }
    return `${refreshed.description}; the previous refresh token is refused (400)`;
  }

  async warmUp(seconds: number, fire: Fire): Promise<AutocannonResult | undefined> {
    if (seconds <= 0) return undefined;
    if (this.#kind !== 'exchange') return fire({ ...this.#options(), duration: seconds }, 'warm-up');
    const warmStart = process.hrtime.bigint();
    this.#useCodes(await this.#exchangeCodes(Math.max(this.#load.connections * 4, Math.round(seconds * 1000))));
    const warm = await fire({ ...this.#options(), amount: this.#codes.length }, 'exchange warm-up');
    const warmSeconds = Number((this.#lastResponseAt ?? process.hrtime.bigint()) - warmStart) / 1e9;
    this.#rate = warm.requests.total / Math.max(0.001, warmSeconds);
    return warm;
  }

  #rate = 1000;

  /** The window's options; the exchange mints its pool first (twice the warm-up rate: the warm-up runs cold). */
  async measureOptions(seconds: number): Promise<AutocannonOptions> {
    if (this.#kind !== 'exchange') return { ...this.#options(), duration: seconds };
    const needed = Math.min(150_000, Math.max(this.#load.connections * 4, Math.ceil(2 * this.#rate * seconds)));
    this.#useCodes(await this.#exchangeCodes(needed));
    return { ...this.#options(), amount: this.#codes.length };
  }

  /**
   * Options for exactly `requests` requests (bench/instructions.ts counts a fixed number of them, not a time window);
   * the exchange mints that many codes first.
   */
  async amountOptions(requests: number): Promise<AutocannonOptions> {
    if (this.#kind === 'exchange') this.#useCodes(await this.#exchangeCodes(requests));
    return { ...this.#options(), amount: requests };
  }

  /**
   * Signs in and redeems `count` fresh codes, returning their access tokens (the UserInfo and introspection rows
   * present them, bench/token-pools.ts). Any answer without an access token fails.
   */
  async accessTokens(count: number): Promise<string[]> {
    const tokens: string[] = [];
    while (tokens.length < count) {
      // sentinel-idp keeps the newest `session.maxGrantsPerApp` grants of an app per session and ends the older ones
      // (their access tokens with them): at most that many tokens come from one session, as from as many users. Each
      // session's codes are redeemed at once: minting all first would outlast the first codes' lifetime.
      this.#cookie = await this.#dialect.login(this.#port);
      tokens.push(...(await this.#redeem(await this.mintCodes(Math.min(CHAINS_PER_SESSION, count - tokens.length)))));
    }
    return tokens;
  }

  /** Redeems `codes` and returns their access tokens; fails unless every code gives one. */
  async #redeem(codes: string[]): Promise<string[]> {
    const tokens: string[] = [];
    let next = 0;
    const result = await autocannon({
      url: `http://${HOST}:${this.#port}`,
      connections: Math.min(this.#load.connections, codes.length),
      pipelining: 1,
      timeout: this.#load.timeoutSeconds,
      amount: codes.length,
      requests: [
        {
          method: 'POST',
          path: this.#dialect.tokenPath,
          headers: { 'content-type': FORM_CONTENT_TYPE },
          setupRequest: (request) => ({ ...request, body: this.exchangeBody(codes[next++] as string) }),
          onResponse: (status, body) => {
            const token = status === 200 ? (JSON.parse(String(body)) as { access_token?: unknown }).access_token : undefined;
            if (typeof token === 'string') tokens.push(token);
          },
        },
      ],
    });
    if (result.errors > 0 || result.timeouts > 0 || tokens.length < codes.length) {
      throw new Error(
        `redeeming codes: ${tokens.length} access tokens of ${codes.length} (${result.errors} errors, ${result.timeouts} timeouts)`,
      );
    }
    return tokens;
  }

  /**
   * `count` codes for exchange requests, minted through new sessions of as many new users as {@link CODES_PER_SESSION}
   * asks, in turn across them: consecutive codes are different users'.
   */
  async #exchangeCodes(count: number): Promise<string[]> {
    const cookies: string[] = new Array(Math.ceil(count / CODES_PER_SESSION));
    let next = 0;
    const signInNext = async (): Promise<void> => {
      while (next < cookies.length) {
        const at = next++;
        cookies[at] = await this.#dialect.loginAs(this.#port, `${USERNAME}-${++this.#users}`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(SIGN_IN_CONCURRENCY, cookies.length) }, signInNext));
    return this.mintCodes(count, cookies);
  }

  #useCodes(codes: string[]): void {
    this.#codes = codes;
    this.#nextCode = 0;
  }

  #options(): AutocannonOptions {
    const common = {
      url: `http://${HOST}:${this.#port}`,
      connections: this.#load.connections,
      pipelining: 1,
      timeout: this.#load.timeoutSeconds,
    };
    if (this.#kind === 'authorize') {
      return { ...common, requests: [{ method: 'GET', path: this.#dialect.authorizePath(this.#port), headers: { cookie: this.#cookie } }] };
    }
    const request = { method: 'POST', path: this.#dialect.tokenPath, headers: { 'content-type': FORM_CONTENT_TYPE } };
    if (this.#kind === 'exchange') {
      const next = (): string => this.exchangeBody(this.#codes[this.#nextCode++] ?? 'exhausted-code-pool');
      const onResponse = (): void => {
        this.#lastResponseAt = process.hrtime.bigint();
      };
      return { ...common, requests: [{ ...request, setupRequest: (r) => ({ ...r, body: next() }), onResponse }] };
    }
    const next = (): string => refreshBody(this.#refreshQueue.shift() ?? 'exhausted-refresh-chains');
    // A failed rotation ends its chain; the row fails on the status anyway.
    const onResponse = (status: number, body: string): void => {
      if (status === 200) this.#refreshQueue.push(refreshTokenOf(body));
    };
    return { ...common, requests: [{ ...request, setupRequest: (r) => ({ ...r, body: next() }), onResponse }] };
  }

  /** The form body that redeems `code` (with the PKCE verifier and the client's secret). */
  exchangeBody(code: string): string {
    const { client_id, client_secret } = { client_id: CLIENT_ID, client_secret: CLIENT_SECRET };
    const redirect_uri = redirectUriFor(this.#port);
    return new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri,
      client_id,
      client_secret,
      code_verifier: CODE_VERIFIER,
    }).toString();
  }

  async #post(body: string): Promise<{ status: number; headers: Headers; body: string }> {
    const response = await fetch(`http://${HOST}:${this.#port}${this.#dialect.tokenPath}`, {
      method: 'POST',
      headers: { 'content-type': FORM_CONTENT_TYPE },
      body,
      signal: checkTimeout(),
    });
    return { status: response.status, headers: response.headers, body: await response.text() };
  }

  async #checkAuthorize(): Promise<string> {
    const response = await fetch(`http://${HOST}:${this.#port}${this.#dialect.authorizePath(this.#port)}`, {
      redirect: 'manual',
      headers: { cookie: this.#cookie },
      signal: checkTimeout(),
    });
    await response.arrayBuffer();
    const location = response.headers.get('location') ?? '';
    const expected = flowExpectedStatus(this.#workload);
    if (response.status !== expected || codeFromLocation(location, this.#port) === null) {
      throw new Error(`first authorize: ${response.status} to ${location.slice(0, 120)}, expected ${expected} with a code`);
    }
    if (new URL(location).searchParams.get('state') !== STATE) throw new Error('first authorize: state not returned');
    return `${expected} to the redirect URI with code and state`;
  }

  /**
   * Mints `count` codes with the session (or the `cookies` of several, in turn): authorize requests, codes taken from
   * Location. An overloaded server may answer a few with an error redirect (a store command timed out): those are
   * asked again, up to three times.
   */
  async mintCodes(count: number, cookies: readonly string[] = [this.#cookie]): Promise<string[]> {
    const codes: string[] = [];
    let turn = 0;
    for (let attempt = 0; attempt < 3 && codes.length < count; attempt++) {
      const wanted = count - codes.length;
      const result = await autocannon({
        url: `http://${HOST}:${this.#port}`,
        connections: Math.min(this.#load.connections, wanted),
        pipelining: 1,
        timeout: this.#load.timeoutSeconds,
        amount: wanted,
        requests: [
          {
            method: 'GET',
            path: this.#dialect.authorizePath(this.#port),
            headers: { cookie: this.#cookie },
            // The sessions take turns.
            setupRequest: (request) => ({
              ...request,
              headers: { ...request.headers, cookie: cookies[turn++ % cookies.length] as string },
            }),
            onResponse: (status, _body, _context, headers) => {
              const location = headers.location ?? headers.Location;
              const code = status === 302 || status === 303 ? codeFromLocation(String(location ?? ''), this.#port) : null;
              if (code !== null) codes.push(code);
            },
          },
        ],
      });
      if (result.errors > 0 || result.timeouts > 0) throw new Error(`minting codes: ${result.errors} errors, ${result.timeouts} timeouts`);
    }
    if (codes.length < count) throw new Error(`minting codes: ${codes.length} of ${count}`);
    return codes;
  }

  /** Posts one token request and checks the answer: 200, no-store, both JWTs verified, a refresh token. */
  async #checkTokens(body: string, publicJwk: JWK): Promise<{ description: string; refreshToken: string }> {
    const response = await this.#post(body);
    if (response.status !== 200) throw new Error(`first ${this.#kind}: ${response.status} ${response.body.slice(0, 200)}`);
    if (!/no-store/i.test(response.headers.get('cache-control') ?? '')) throw new Error('no Cache-Control: no-store');
    const tokens = JSON.parse(response.body) as Record<string, unknown>;
    if (String(tokens.token_type).toLowerCase() !== 'bearer') throw new Error(`token_type ${String(tokens.token_type)}`);
    const key = await importJWK(publicJwk, 'ES256');
    const issuer = this.#dialect.oidc ? issuerFor(this.#port) : undefined;
    const access = await jwtVerify(String(tokens.access_token), key, {
      algorithms: ['ES256'],
      typ: 'at+jwt',
      ...(issuer ? { issuer } : {}),
    });
    if (access.payload.client_id !== CLIENT_ID || typeof access.payload.sub !== 'string' || typeof access.payload.jti !== 'string') {
      throw new Error(`access token claims: ${JSON.stringify(access.payload).slice(0, 200)}`);
    }
    if (this.#dialect.oidc && access.payload.aud !== OIDC_RESOURCE) throw new Error(`access token aud ${String(access.payload.aud)}`);
    const id = await jwtVerify(String(tokens.id_token), key, { algorithms: ['ES256'], audience: CLIENT_ID });
    if (id.payload.sub !== access.payload.sub) throw new Error('ID token and access token name different users');
    if (this.#kind === 'exchange' && id.payload.nonce !== NONCE) throw new Error('ID token without the nonce');
    const refreshToken = refreshTokenOf(response.body);
    return {
      refreshToken,
      description: `200: ES256 at+jwt (${Object.keys(access.payload).sort().join(',')}), ES256 ID token (${Object.keys(id.payload).sort().join(',')}), refresh token`,
    };
  }
}

/** The form body of a refresh rotation presenting `token`. */
function refreshBody(token: string): string {
  return new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: token,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  }).toString();
}

function refreshTokenOf(body: string | Buffer): string {
  const token = (JSON.parse(String(body)) as { refresh_token?: unknown }).refresh_token;
  if (typeof token !== 'string' || token === '') throw new Error('token response without a refresh_token');
  return token;
}
