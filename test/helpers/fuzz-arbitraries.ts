/**
 * What the fuzz suites share: reproducible settings (FUZZ_SEED, FUZZ_RUNS), the fast-check arbitraries of hostile
 * requests (parameters, bodies, headers), and the check every answer must pass.
 *
 * The values mix the valid (real client ids, redirect URIs, secrets, the live interaction and its CSRF token) with
 * the hostile, so that generated requests reach deep into the handlers instead of failing at the first check.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { SentinelRequest, SentinelResponse } from '../../src/index.js';
import type { StoreWrite } from './direct-flow.js';
import {
  ACCOUNT,
  basic,
  CLIENT_ID,
  CLIENT_SECRET,
  CONSUMER_UUID,
  ISSUER,
  OTHER_CLIENT_ID,
  PASSWORD,
  PUBLIC_CLIENT_ID,
  REDIRECT_URI,
  SECOND_REDIRECT_URI,
  USERNAME,
} from './fixtures.js';

/** The default seed: fixed, so CI runs the same cases every time; FUZZ_SEED explores others. */
const DEFAULT_SEED = 20_260_707;
/** A thousand runs per property keep both fuzz suites under ten seconds on 2 cores; FUZZ_RUNS scales up or down. */
const DEFAULT_RUNS = 1000;

/**
 * The seed and run count of a fuzz suite, printed so that any failure can be replayed with FUZZ_SEED=….
 * fast-check's own failure report adds the counterexample and its shrink path.
 */
export function fuzzSettings(suite: string): { seed: number; numRuns: number } {
  const seed = process.env.FUZZ_SEED === undefined ? DEFAULT_SEED : Number(process.env.FUZZ_SEED);
  const numRuns = process.env.FUZZ_RUNS === undefined ? DEFAULT_RUNS : Number(process.env.FUZZ_RUNS);
  if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${process.env.FUZZ_SEED}`);
  if (!Number.isInteger(numRuns) || numRuns < 1) throw new Error(`FUZZ_RUNS must be a positive integer, got ${process.env.FUZZ_RUNS}`);
  console.info(`[${suite}] FUZZ_SEED=${seed} FUZZ_RUNS=${numRuns} (replay a failure with these)`);
  return { seed, numRuns };
}

/** Markup that must never come back unescaped in HTML. */
export const HOSTILE_MARKUP: readonly string[] = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "'><svg onload=alert(1)>",
  '</textarea><script>x()</script>',
  '<iframe srcdoc="x">',
];

/** Redirect URIs every app of the fixtures registered: the only external places a Location may name. */
export const REGISTERED_REDIRECTS: readonly string[] = [REDIRECT_URI, SECOND_REDIRECT_URI, 'https://other.example.com/cb'];

const CYRILLIC_CLIENT = CLIENT_ID.replace(/c/g, '\u0441');
const FULLWIDTH_CLIENT = [...CLIENT_ID]
  .map((ch) => (/[0-9a-z]/.test(ch) ? String.fromCodePoint((ch.codePointAt(0) as number) + 0xfee0) : ch))
  .join('');

const VALID_VALUES = [
  CLIENT_ID,
  PUBLIC_CLIENT_ID,
  OTHER_CLIENT_ID,
  REDIRECT_URI,
  SECOND_REDIRECT_URI,
  CLIENT_SECRET,
  USERNAME,
  PASSWORD,
  CONSUMER_UUID,
  'code',
  'S256',
  'plain',
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'password',
  '1.0',
  '2.0',
  'openid',
  '1',
];

const HOSTILE_VALUES = [
  ...HOSTILE_MARKUP,
  '\r\nSet-Cookie: pwned=1',
  '\r\nLocation: https://evil.example',
  '\u0000',
  `${CLIENT_ID}\u0000`,
  '%',
  '%E0%A4%A',
  '%00',
  '%252F',
  '..',
  '../../../etc/passwd',
  'javascript:alert(1)',
  'https://evil.example/cb',
  'https://evil.example@app.example.com/cb',
  `${REDIRECT_URI}#`,
  `${REDIRECT_URI}/../cb`,
  encodeURIComponent(REDIRECT_URI),
  'https://\u0430pp.example.com/cb',
  'https://xn--pp-8cd.example.com/cb',
  'ｈｔｔｐｓ://app.example.com/cb',
  CYRILLIC_CLIENT,
  FULLWIDTH_CLIENT,
  CLIENT_ID.toUpperCase(),
  '\ud800',
  '\u202e',
  '__proto__',
  'constructor',
];

const PARAM_NAMES = [
  'response_type',
  'client_id',
  'redirect_uri',
  'state',
  'scope',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'v',
  'interaction',
  'grant_type',
  'code',
  'code_verifier',
  'refresh_token',
  'client_secret',
  'token',
  'token_type_hint',
  'csrf_token',
  'username',
  'password',
  'cancel',
  'post_logout_redirect_uri',
  'client_id[]',
  'client_id[x]',
  '__proto__',
];

/** A live interaction and its CSRF token, so login requests get past the first checks. */
export type LoginRef = () => { interaction: string; csrf: string };

/** One parameter value: valid, hostile, random (any code point, lone surrogates included), or huge. */
export function hostileValue(login?: LoginRef): fc.Arbitrary<string> {
  const live = login === undefined ? [] : [fc.constant(null).map(() => login().interaction), fc.constant(null).map(() => login().csrf)];
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...VALID_VALUES) },
    { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_VALUES) },
    { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 40_000 }).map((size) => 'v'.repeat(size)) },
    ...live.map((arbitrary) => ({ weight: 2, arbitrary })),
  );
}

function encodeValue(value: string, mode: 'proper' | 'raw' | 'double'): string {
  const proper = new URLSearchParams({ v: value }).toString().slice(2);
  if (mode === 'proper') return proper;
  if (mode === 'double') return encodeURIComponent(proper);
  // Raw: broken escapes and stray '&', '=' and '+' go through as the attacker typed them.
  return value.replace(/[\r\n#\s]/g, (ch) => encodeURIComponent(ch));
}

/** A form or query string of hostile parameters (names repeated, escapes broken or doubled). */
export function hostileParams(login?: LoginRef, options: { validAuthorize?: boolean } = {}): fc.Arbitrary<string> {
  const name = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...PARAM_NAMES) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) });
  const pair = fc
    .tuple(name, hostileValue(login), fc.constantFrom('proper', 'proper', 'raw', 'double') as fc.Arbitrary<'proper' | 'raw' | 'double'>)
    .map(([key, value, mode]) => `${encodeURIComponent(key)}=${encodeValue(value, mode)}`);
  const prefix =
    options.validAuthorize === true ? `response_type=code&client_id=${CLIENT_ID}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&` : '';
  return fc.array(pair, { maxLength: 8 }).map((pairs) => `${prefix}${pairs.join('&')}`);
}

/** A body as it may reach the core: absent, raw text, raw bytes (invalid UTF-8 included), or what a host parser produced. */
export function hostileBody(login?: LoginRef): fc.Arbitrary<SentinelRequest['body']> {
  const parsedValue: fc.Arbitrary<unknown> = fc.oneof(
    { weight: 4, arbitrary: hostileValue(login) },
    { weight: 2, arbitrary: fc.array(hostileValue(login), { maxLength: 3 }) },
    { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 5 }), hostileValue(login), { maxKeys: 3 }) },
    { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined)) },
  );
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    // Outside the type, but what a JavaScript host hands over for "no body" as often as undefined.
    { weight: 1, arbitrary: fc.constant(null as unknown as SentinelRequest['body']) },
    { weight: 5, arbitrary: hostileParams(login) },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(hostileParams(login), fc.constantFrom([0xc3, 0x28], [0xff, 0xfe], [0xed, 0xa0, 0x80], [0xf0, 0x28, 0x8c]))
        .map(([form, bad]) => Buffer.concat([Buffer.from(`${form}&client_id=`), Buffer.from(bad), Buffer.from('&x=1')])),
    },
    {
      weight: 4,
      arbitrary: fc.dictionary(fc.constantFrom(...PARAM_NAMES), parsedValue, { maxKeys: 8 }) as fc.Arbitrary<Record<string, unknown>>,
    },
    {
      weight: 1,
      arbitrary: fc
        .dictionary(fc.constantFrom(...PARAM_NAMES), hostileValue(login), { maxKeys: 4 })
        .map((object) => JSON.stringify(object)),
    },
    { weight: 1, arbitrary: fc.constant(`grant_type=client_credentials&pad=${'p'.repeat(20_000)}`) },
    {
      weight: 1,
      arbitrary: fc.constant(JSON.parse('{"__proto__":{"polluted":"1"},"grant_type":"client_credentials"}') as Record<string, unknown>),
    },
  );
}

/** Request headers as a host hands them over (lower-case names; a few given twice as arrays). Mostly a form type. */
export function hostileHeaders(): fc.Arbitrary<SentinelRequest['headers']> {
  const contentType = fc.oneof(
    {
      weight: 8,
      arbitrary: fc.constantFrom(
        'application/x-www-form-urlencoded',
        'application/x-www-form-urlencoded; charset=UTF-8',
        'application/x-www-form-urlencoded;charset="utf-8"',
      ),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'application/x-www-form-urlencoded; charset=ISO-8859-1',
        'application/json',
        'text/plain',
        'multipart/form-data; boundary=x',
        '',
      ),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
    { weight: 1, arbitrary: fc.constant(['application/x-www-form-urlencoded', 'application/json']) },
  );
  const authorization = fc.oneof(
    fc.constant(basic(CLIENT_ID, CLIENT_SECRET)),
    fc.tuple(hostileValue(), hostileValue()).map(([id, secret]) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`),
    fc.string({ maxLength: 40 }).map((value) => `Basic ${value}`),
    fc.string({ maxLength: 40 }).map((value) => `Bearer ${value}`),
    fc.string({ unit: 'binary', maxLength: 40 }),
  );
  const rare = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arbitrary, { freq: 4, nil: undefined });
  return fc
    .record({
      'content-type': fc.option(contentType, { freq: 8, nil: undefined }).map((value) => value ?? 'application/x-www-form-urlencoded'),
      authorization: rare(authorization),
      origin: rare(fc.constantFrom('https://evil.example', 'null', ISSUER, 'https://app.example.com')),
      'sec-fetch-site': rare(fc.constantFrom('cross-site', 'same-origin', 'same-site', 'none')),
      cookie: rare(
        fc.oneof(
          hostileValue().map((value) => `sentinel_session=${value}`),
          fc.string({ unit: 'binary', maxLength: 60 }),
        ),
      ),
      accept: rare(fc.constantFrom('application/json', 'text/html', '*/*', 'text/html;q=0.1, application/json')),
      'content-length': fc.option(fc.oneof(fc.nat(100_000).map(String), fc.constantFrom('99999999', '-1', 'abc', '')), {
        freq: 10,
        nil: undefined,
      }),
      'x-forwarded-for': rare(fc.string({ maxLength: 40 })),
    })
    .map((headers) => Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined)) as SentinelRequest['headers']);
}

type Pair = [string, string];

/** Valid parameters of each endpoint, so that mutations of them reach past the first checks. */
function endpointBases(
  login: LoginRef,
): Array<{ method: string; path: string; query: () => Record<string, string>; body: () => Record<string, string> | null }> {
  const account = `/sentinel/api/account/${ACCOUNT}`;
  const client = { client_id: CLIENT_ID, client_secret: CLIENT_SECRET };
  return [
    {
      method: 'GET',
      path: `${account}/authorize`,
      query: () => ({
        response_type: 'code',
        client_id: CLIENT_ID,
        redirect_uri: REDIRECT_URI,
        state: 'st',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }),
      body: () => null,
    },
    { method: 'GET', path: `${account}/login`, query: () => ({ interaction: login().interaction }), body: () => null },
    {
      method: 'POST',
      path: `${account}/login`,
      query: () => ({ interaction: login().interaction }),
      body: () => ({ csrf_token: login().csrf, username: USERNAME, password: 'not-the-password' }),
    },
    {
      method: 'POST',
      path: `${account}/token`,
      query: () => ({}),
      body: () => ({
        grant_type: 'authorization_code',
        code: 'c'.repeat(43),
        redirect_uri: REDIRECT_URI,
        code_verifier: 'v'.repeat(43),
        ...client,
      }),
    },
    {
      method: 'POST',
      path: `${account}/token`,
      query: () => ({}),
      body: () => ({ grant_type: 'refresh_token', refresh_token: 'r'.repeat(43), ...client }),
    },
    {
      method: 'POST',
      path: `/sentinel/api/v2/account/${ACCOUNT}/app/token`,
      query: () => ({ state: CONSUMER_UUID }),
      body: () => ({ grant_type: 'client_credentials', ...client }),
    },
    {
      method: 'POST',
      path: `${account}/app/token`,
      query: () => ({ v: '1.0' }),
      body: () => ({ grant_type: 'client_credentials', ...client }),
    },
    { method: 'POST', path: `${account}/token/revoke`, query: () => ({}), body: () => ({ token: 't'.repeat(43), ...client }) },
    { method: 'POST', path: `${account}/token/introspect`, query: () => ({}), body: () => ({ token: 't'.repeat(43), ...client }) },
    {
      method: 'POST',
      path: `${account}/logout`,
      query: () => ({}),
      body: () => ({ client_id: CLIENT_ID, post_logout_redirect_uri: REDIRECT_URI, state: 'st' }),
    },
  ];
}

/** Up to four mutations of a valid parameter list: drop, replace with a hostile value, repeat, or add a parameter. */
function mutate(base: Pair[], login: LoginRef): fc.Arbitrary<Pair[]> {
  const names = base.length === 0 ? PARAM_NAMES : base.map(([name]) => name);
  const mutation = fc.oneof(
    fc.tuple(fc.constant('drop' as const), fc.constantFrom(...names), hostileValue(login)),
    fc.tuple(fc.constant('replace' as const), fc.constantFrom(...names), hostileValue(login)),
    fc.tuple(fc.constant('repeat' as const), fc.constantFrom(...names), hostileValue(login)),
    fc.tuple(fc.constant('add' as const), fc.oneof(fc.constantFrom(...PARAM_NAMES), fc.string({ maxLength: 10 })), hostileValue(login)),
  );
  return fc.array(mutation, { maxLength: 4 }).map((mutations) => {
    let pairs = [...base];
    for (const [kind, name, value] of mutations) {
      if (kind === 'drop') pairs = pairs.filter(([key]) => key !== name);
      else if (kind === 'replace') pairs = pairs.map(([key, old]) => [key, key === name ? value : old]);
      else pairs.push([name, value]);
    }
    return pairs;
  });
}

function toQuery(pairs: Pair[], mode: 'proper' | 'raw' | 'double'): string {
  return pairs.map(([name, value]) => `${encodeURIComponent(name)}=${encodeValue(value, mode)}`).join('&');
}

/** The pairs as a qs-style parser would hand them over: repeats become arrays, some values nested objects. */
function toParsed(pairs: Pair[], nest: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of pairs) {
    const previous = body[name];
    body[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  if (nest && pairs.length > 0) body[(pairs[0] as Pair)[0]] = { [(pairs[0] as Pair)[1].slice(0, 8)]: '1' };
  return body;
}

/** A request of one endpoint with its valid parameters mutated, encoded as query, raw body, bytes or a parsed body. */
export function endpointRequest(login: LoginRef): fc.Arbitrary<FuzzInput> {
  return fc.constantFrom(...endpointBases(login)).chain((endpoint) => {
    const encoding = fc.constantFrom('proper', 'proper', 'proper', 'raw', 'double') as fc.Arbitrary<'proper' | 'raw' | 'double'>;
    const baseBody = endpoint.body();
    const body: fc.Arbitrary<SentinelRequest['body']> =
      baseBody === null
        ? fc.constant(undefined)
        : fc.tuple(mutate(Object.entries(baseBody), login), encoding, fc.nat(9)).map(([pairs, mode, shape]) => {
            if (shape <= 3) return toQuery(pairs, mode);
            if (shape <= 5) return toParsed(pairs, shape === 5);
            if (shape === 6) return Buffer.concat([Buffer.from(toQuery(pairs, mode)), Buffer.from('&client_id=\xc3\x28\xff', 'latin1')]);
            if (shape === 7) return JSON.stringify(toParsed(pairs, false));
            if (shape === 8) return Buffer.from(toQuery(pairs, mode), 'latin1');
            return `${toQuery(pairs, mode)}&pad=${'p'.repeat(20_000)}`;
          });
    return fc.record({
      method: fc.oneof(
        { weight: 9, arbitrary: fc.constant(endpoint.method) },
        { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'HEAD', 'DELETE') },
      ),
      path: fc.oneof(
        { weight: 9, arbitrary: fc.constant(endpoint.path) },
        {
          weight: 1,
          arbitrary: fc
            .string({ unit: 'binary', minLength: 1, maxLength: 30 })
            .map((account) => endpoint.path.replace(ACCOUNT, encodeURIComponent(account))),
        },
      ),
      rawQuery: fc.tuple(mutate(Object.entries(endpoint.query()), login), encoding).map(([pairs, mode]) => toQuery(pairs, mode)),
      headers: hostileHeaders(),
      body,
      ip: fc.constantFrom('203.0.113.1', '203.0.113.2', '::1', undefined),
    });
  });
}

/** One generated request. */
export interface FuzzInput {
  method: string;
  path: string;
  rawQuery: string;
  headers: SentinelRequest['headers'];
  body: SentinelRequest['body'];
  ip: string | undefined;
}

const LOGIN_LOCATION = new RegExp(`^/sentinel/api/account/${ACCOUNT}/login\\?interaction=[A-Za-z0-9_-]{43}$`);
/**
 * A POST to the authorization endpoint without the session cookie goes on to the GET of its parameters, whatever
 * the account (the GET checks it): the service's own path, never another origin.
 */
const AUTHORIZE_LOCATION = /^\/sentinel\/api\/account\/[^/?#]+\/authorize\?[^#]*$/;
/**
 * A logout posted cross-site without the session cookie (the app's own form), or with `Origin: null` and no
 * `Sec-Fetch-Site`, goes on to RP-initiated logout's GET, parked, whatever the account (the GET checks it): the
 * service's own path, carrying only the handle.
 */
const END_SESSION_LOCATION = /^\/sentinel\/api\/account\/[^/?#]+\/end_session\?posted_request=[A-Za-z0-9_-]{43}$/;

/**
 * True when `location` names a registered redirect URI (with its response parameters), the service's login page, or
 * the service's authorization or end-session endpoint (the 303 that turns a POST into a GET).
 */
export function isAllowedLocation(location: string): boolean {
  if (LOGIN_LOCATION.test(location) || AUTHORIZE_LOCATION.test(location) || END_SESSION_LOCATION.test(location)) return true;
  return REGISTERED_REDIRECTS.some((uri) => location === uri || location.startsWith(`${uri}${uri.includes('?') ? '&' : '?'}`));
}

function headerText(response: SentinelResponse, name: string): string {
  const value = response.headers[name];
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

/**
 * The properties every answer must have (see the fuzz suites' headers). `writes` are the store writes the request
 * made; a refused request must have made none.
 */
export function checkOutcome(response: SentinelResponse, writes: readonly StoreWrite[], input: FuzzInput): void {
  const context = `${input.method} ${input.path}?${input.rawQuery.slice(0, 200)}`;
  expect(response.status, context).toBeGreaterThanOrEqual(200);
  expect(response.status, context).toBeLessThan(500);
  for (const [name, value] of Object.entries(response.headers)) {
    for (const one of Array.isArray(value) ? value : [value]) expect(/[\r\n\u0000]/.test(String(one)), `header ${name}`).toBe(false);
  }
  const contentType = headerText(response, 'content-type');
  const body = response.body ?? '';
  let refused = response.status >= 400;
  if (response.status === 302 || response.status === 303) {
    const location = headerText(response, 'location');
    expect(isAllowedLocation(location), `Location ${location.slice(0, 200)}`).toBe(true);
    if (!location.startsWith('/')) refused ||= new URL(location).searchParams.has('error');
  } else {
    expect(response.headers.location, context).toBeUndefined();
  }
  // A HEAD answer over HTTP has no body to check.
  const hasBody = !(input.method === 'HEAD' && body === '');
  if (hasBody && contentType.startsWith('application/json') && body !== '') {
    const payload = JSON.parse(body) as Record<string, unknown>;
    if (response.status >= 400) {
      expect(payload.error, context).toMatch(/^[a-z_]+$/);
      expect(typeof payload.error_description, context).toBe('string');
    } else if (typeof payload.access_token === 'string') {
      expect(payload.token_type).toBe('Bearer');
    }
  }
  if (hasBody && contentType.startsWith('text/html')) {
    expect(body.toLowerCase(), context).toContain('<!doctype html>');
    for (const markup of HOSTILE_MARKUP) expect(body.includes(markup), `unescaped ${markup}`).toBe(false);
    const isLoginForm = body.includes('name="csrf_token"');
    if (response.status >= 400 && !isLoginForm) expect(body, context).toMatch(/Error code: <code>[a-z_]+<\/code>/);
  }
  if (refused) {
    // Nothing written for a refused request; an error redirect may only have ended the interaction (a cancel).
    const changes =
      response.status >= 400 ? writes : writes.filter((write) => write.op !== 'take' || !write.key.startsWith('interaction:'));
    expect(changes, `writes of a refused request: ${context}`).toEqual([]);
  }
}
