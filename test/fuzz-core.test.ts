/**
 * Property-based fuzzing of the authorize, login and token endpoints through the core (`sentinel.handle()`)
 * §1. Random and hostile query strings, bodies (raw text, invalid UTF-8 bytes, qs-style nested objects and arrays
 * as host parsers produce them) and headers. For every request:
 * - `handle()` resolves (no exception escapes) with a status below 500;
 * - the answer is a well-formed OAuth outcome: JSON `{error, error_description}`, an HTML page (error pages name
 *   their error code), a login page, or a redirect;
 * - a `Location` points only into a registered redirect URI of the app or to the service's own login page;
 * - no header carries CR/LF, and no hostile markup from the input appears unescaped in the HTML;
 * - a refused request (4xx, or an error redirect) writes nothing to the store.
 *
 * Seeds are reproducible: fixed by default, FUZZ_SEED overrides it, FUZZ_RUNS scales the runs; the seed is printed.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelResponse } from '../src/index.js';
import {
  ACCOUNT_PATH,
  AUTHORIZE_PATH,
  LOGIN_PATH,
  openLogin,
  recordingStore,
  startInteraction,
  TOKEN_PATH,
  type RecordingStore,
} from './helpers/direct-flow.js';
import {
  checkOutcome,
  endpointRequest,
  fuzzSettings,
  HOSTILE_MARKUP,
  hostileBody,
  hostileHeaders,
  hostileParams,
  type FuzzInput,
} from './helpers/fuzz-arbitraries.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';

const { seed, numRuns } = fuzzSettings('fuzz-core');

describe('fuzzing the core through sentinel.handle()', () => {
  let store: RecordingStore;
  let sentinel: Sentinel;
  let login: { interaction: string; csrf: string };

  beforeAll(async () => {
    store = recordingStore(new MemoryStore());
    sentinel = makeSentinel({ store });
    const { interaction } = await startInteraction(sentinel);
    login = { interaction, csrf: await openLogin(sentinel, interaction) };
  });

  async function run(input: FuzzInput): Promise<SentinelResponse | null> {
    store.reset();
    const response = await sentinel.handle({
      method: input.method,
      path: input.path,
      query: new URLSearchParams(input.rawQuery),
      headers: input.headers,
      body: input.body,
      ip: input.ip,
    });
    return response;
  }

  const paths = (): fc.Arbitrary<string> =>
    fc.oneof(
      {
        weight: 6,
        arbitrary: fc.constantFrom(
          AUTHORIZE_PATH,
          LOGIN_PATH,
          TOKEN_PATH,
          `${ACCOUNT_PATH}/app/token`,
          `/sentinel/api/v2/account/${ACCOUNT}/app/token`,
          `${TOKEN_PATH}/revoke`,
          `${TOKEN_PATH}/introspect`,
          `${ACCOUNT_PATH}/logout`,
          `${ACCOUNT_PATH}/userinfo`,
          `${ACCOUNT_PATH}/end_session`,
          `${ACCOUNT_PATH}/.well-known/jwks.json`,
        ),
      },
      {
        weight: 1,
        arbitrary: fc
          .tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), fc.constantFrom('authorize', 'login', 'token', 'app/token'))
          .map(([account, endpoint]) => `/sentinel/api/account/${encodeURIComponent(account)}/${endpoint}`),
      },
    );

  // Mostly mutations of valid requests (they reach deep into the handlers), some requests built from scratch.
  const inputs = (): fc.Arbitrary<FuzzInput> =>
    fc.oneof({ weight: 4, arbitrary: endpointRequest(() => login) }, { weight: 1, arbitrary: scratch() });

  const scratch = (): fc.Arbitrary<FuzzInput> =>
    fc.record({
      method: fc.constantFrom('GET', 'GET', 'POST', 'POST', 'PUT', 'HEAD', 'DELETE'),
      path: paths(),
      rawQuery: hostileParams(() => login),
      headers: hostileHeaders(),
      body: hostileBody(() => login),
      ip: fc.constantFrom('203.0.113.1', '203.0.113.2', '::1', undefined),
    });

  it(`never a 5xx or a throw, always a well-formed answer, no foreign Location, no unescaped markup, no writes when refused (seed ${seed}, ${numRuns} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(inputs(), async (input) => {
        const response = await run(input);
        expect(response, 'every generated path is a route of the service').not.toBeNull();
        checkOutcome(response as SentinelResponse, store.writes, input);
      }),
      { seed, numRuns, endOnFailure: true },
    );
  });

  it(`hostile parameters on a valid authorize request never leave the registered redirect URI (seed ${seed})`, async () => {
    await fc.assert(
      fc.asyncProperty(
        hostileParams(() => login, { validAuthorize: true }),
        hostileHeaders(),
        async (rawQuery, headers) => {
          const response = await run({ method: 'GET', path: AUTHORIZE_PATH, rawQuery, headers, body: undefined, ip: '203.0.113.9' });
          checkOutcome(response as SentinelResponse, store.writes, {
            method: 'GET',
            path: AUTHORIZE_PATH,
            rawQuery,
            headers,
            body: undefined,
            ip: undefined,
          });
        },
      ),
      { seed, numRuns, endOnFailure: true },
    );
  });

  it(`the login form never reflects hostile input unescaped (seed ${seed})`, async () => {
    // Every attempt fails on purpose: a throttle high enough that the form, not the 429 page, comes back.
    const unthrottled = makeSentinel({ throttle: { maxFailures: 1_000_000, maxFailuresPerIp: 1_000_000, windowSeconds: 60 } });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...HOSTILE_MARKUP), fc.string({ maxLength: 30 }), async (markup, noise) => {
        const { interaction } = await startInteraction(unthrottled);
        const csrf = await openLogin(unthrottled, interaction);
        const body = new URLSearchParams({ csrf_token: csrf, username: `${noise}${markup}`, password: markup }).toString();
        const response = (await unthrottled.handle({
          method: 'POST',
          path: LOGIN_PATH,
          query: new URLSearchParams({ interaction }),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body,
          ip: '198.18.0.1',
        })) as SentinelResponse;
        expect(response.status).toBe(200);
        expect(response.body).not.toContain(markup);
        // The wrong password is never echoed back, escaped or not.
        expect(response.body).not.toMatch(/name="password"[^>]*value="[^"]/);
      }),
      { seed, numRuns: Math.max(20, Math.floor(numRuns / 5)), endOnFailure: true },
    );
  });
});

describe('the fuzz checks themselves (they can fail)', () => {
  const input: FuzzInput = { method: 'GET', path: AUTHORIZE_PATH, rawQuery: '', headers: {}, body: undefined, ip: undefined };
  const html = (status: number, body: string): SentinelResponse => ({
    status,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: `<!doctype html>${body}`,
  });

  it.each([
    [
      'a 5xx',
      { status: 500, headers: { 'content-type': 'application/json' }, body: '{"error":"server_error","error_description":"x"}' },
      [],
    ],
    ['a Location outside the registered redirect URIs', { status: 302, headers: { location: 'https://evil.example/cb?code=x' } }, []],
    ['a look-alike Location', { status: 302, headers: { location: 'https://app.example.com/cb.evil.example?code=x' } }, []],
    ['unescaped markup in HTML', html(400, 'Error code: <code>invalid_request</code> <script>alert(1)</script>'), []],
    [
      'a JSON error without error_description',
      { status: 400, headers: { 'content-type': 'application/json' }, body: '{"error":"invalid_request"}' },
      [],
    ],
    ['an error page without its error code', html(400, '<p>oops</p>'), []],
    [
      'a CR/LF in a header',
      { status: 400, headers: { 'content-type': 'application/json', 'x-a': 'a\r\nb' }, body: '{"error":"a","error_description":"b"}' },
      [],
    ],
    [
      'a write for a refused request',
      { status: 400, headers: { 'content-type': 'application/json' }, body: '{"error":"invalid_request","error_description":"b"}' },
      [{ op: 'set', key: 'interaction:x' }],
    ],
    [
      'a write for an error redirect',
      { status: 302, headers: { location: 'https://app.example.com/cb?error=access_denied' } },
      [{ op: 'set', key: 'session:x' }],
    ],
  ] as const)('flags %s', (_name, response, writes) => {
    expect(() => checkOutcome(response as SentinelResponse, writes as never, input)).toThrow();
  });

  it('accepts a login redirect with its interaction write', () => {
    expect(() =>
      checkOutcome(
        { status: 302, headers: { location: `/sentinel/api/account/${ACCOUNT}/login?interaction=${'a'.repeat(43)}` } },
        [{ op: 'set', key: 'interaction:x' }],
        input,
      ),
    ).not.toThrow();
  });
});

describe('a body handed over as null', () => {
  it('reads as no body: a form endpoint answers its 400, not a 500', async () => {
    const sentinel = makeSentinel();
    const response = await sentinel.handle({
      method: 'POST',
      path: `/sentinel/api/account/${ACCOUNT}/token`,
      query: new URLSearchParams(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: null as never,
      ip: '203.0.113.7',
    });
    expect(response?.status).toBe(400);
    expect(JSON.parse(String(response?.body)).error).toBe('invalid_request');
  });
});
