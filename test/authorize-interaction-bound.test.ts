/**
 * The per-address bound on the interactions (pending sign-ins) that every unauthenticated GET of /authorize, and of
 * the account page, stores: `interactionsPerAddress` per `interactionTtl`, IPv6 per /64, and per /48
 * (`interactionsPerNetwork`). Past it /authorize answers `temporarily_unavailable` at the validated redirect URI and
 * stores nothing; the account page, the operator console's sign-in and RP-initiated logout's confirmation page answer 429. The counting itself is the shared bound of src/http/address-bound.ts.
 */
import { describe, expect, it } from 'vitest';
import { createConsole } from '../src/console/index.js';
import { ConfigurationError, createSentinel, MemoryStore, type Sentinel, type SentinelEvent, type SentinelOptions } from '../src/index.js';
import { entryBytes } from '../src/stores/memory-size.js';
import { failingReadsOf } from './helpers/address-bound-suite.js';
import { ACCOUNT_PATH, AUTHORIZE_PATH, authorizeQuery, call, postForm, recordingStore } from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, makeSentinel, REDIRECT_URI } from './helpers/fixtures.js';
import { MAIN_APP, signInWithSession, codeThroughSession } from './helpers/logout-flow.js';

function sentinelWith(address: number, extra: Partial<SentinelOptions> = {}): Sentinel {
  return makeSentinel({ interactionsPerAddress: address, ...extra });
}

function authorize(sentinel: Sentinel, ip: string, headers: Record<string, string> = {}) {
  return call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery(), ip, headers });
}

const toLogin = (response: { status: number; headers: Record<string, unknown> }) =>
  response.status === 302 && /\/login\?interaction=/.test(String(response.headers.location));

function refusal(response: { status: number; headers: Record<string, unknown> }): URLSearchParams | null {
  const location = String(response.headers.location ?? '');
  if (response.status !== 302 || !location.startsWith(`${REDIRECT_URI}?`)) return null;
  return new URL(location).searchParams;
}

const interactionWrites = (writes: { key: string }[]) => writes.filter((write) => write.key.startsWith('interaction:'));

describe('interactions per client address', () => {
  it('at most the limit per window, then temporarily_unavailable at the redirect URI, nothing stored', async () => {
    const store = recordingStore(new MemoryStore());
    const events: SentinelEvent[] = [];
    const sentinel = sentinelWith(3, { store, onEvent: (event) => void events.push(event) });
    for (let index = 0; index < 3; index += 1) expect(toLogin(await authorize(sentinel, '198.51.100.9'))).toBe(true);
    store.reset();
    events.length = 0;
    const refused = await authorize(sentinel, '198.51.100.9');
    const params = refusal(refused);
    expect(params?.get('error')).toBe('temporarily_unavailable');
    expect(params?.get('error_description')).toContain('from this address');
    expect(params?.get('state')).toBe('st-1');
    expect(params?.get('iss')).toBeTruthy();
    // Over the limit already: refused after a read, so the flood writes nothing, not even its counter.
    expect(store.writes).toEqual([]);
    expect(events).toEqual([expect.objectContaining({ type: 'authorize.denied', error: 'temporarily_unavailable', ip: '198.51.100.9' })]);
    expect(toLogin(await authorize(sentinel, '198.51.100.10'))).toBe(true);
  });

  it('bounds a flood by default: the 1001st sign-in an address starts is refused, and stores nothing', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ store });
    for (let index = 0; index < 1000; index += 1) await authorize(sentinel, '198.51.100.99');
    expect(interactionWrites(store.writes)).toHaveLength(1000);
    store.reset();
    expect(refusal(await authorize(sentinel, '198.51.100.99'))?.get('error')).toBe('temporarily_unavailable');
    expect(store.writes).toEqual([]);
  });

  // A cookieless post is parked in the Store for its GET (posted-request.ts): as unbounded as an interaction, so it
  // takes the slot, and the GET that spends it stores its interaction on that slot rather than a second one.
  it('counts a parked cookieless post once, and refuses past the limit with nothing parked', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(2, { store });
    const post = () => postForm(sentinel, AUTHORIZE_PATH, authorizeQuery().toString(), { ip: '198.51.100.77' });
    const parked = await post();
    expect(parked.status).toBe(303);
    const [path, query] = String(parked.headers.location).split('?', 2) as [string, string];
    expect(toLogin(await call(sentinel, { path, query, ip: '198.51.100.77' }))).toBe(true);
    expect((await post()).status).toBe(303);
    store.reset();
    const refused = await post();
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(store.writes.filter((write) => write.key.startsWith('posted-request:'))).toEqual([]);
    expect((await postForm(sentinel, AUTHORIZE_PATH, authorizeQuery().toString(), { ip: '198.51.100.78' })).status).toBe(303);
  });

  it('does not count a request refused for its size (nothing is stored for it)', async () => {
    const sentinel = sentinelWith(1);
    const oversized = authorizeQuery({ state: 's'.repeat(2_000), nonce: 'n'.repeat(2_500) });
    const over = await call(sentinel, { path: AUTHORIZE_PATH, query: oversized, ip: '198.51.100.55' });
    expect(refusal(over)?.get('error')).toBe('invalid_request');
    expect(toLogin(await authorize(sentinel, '198.51.100.55'))).toBe(true);
  });

  it('does not count a browser its session signs in (no interaction is stored)', async () => {
    const sentinel = sentinelWith(1);
    const { cookie } = await signInWithSession(sentinel, MAIN_APP);
    for (let index = 0; index < 3; index += 1) await codeThroughSession(sentinel, MAIN_APP, cookie);
  });

  it('counts IPv6 per /64, and believes X-Forwarded-For only from a trusted proxy', async () => {
    const sentinel = sentinelWith(2);
    expect(toLogin(await authorize(sentinel, '2001:db8:1:2::1'))).toBe(true);
    expect(toLogin(await authorize(sentinel, '2001:db8:1:2:ffff::9'))).toBe(true);
    expect(refusal(await authorize(sentinel, '2001:0db8:0001:0002:abcd::1'))?.get('error')).toBe('temporarily_unavailable');
    expect(toLogin(await authorize(sentinel, '2001:db8:1:3::1'))).toBe(true);
    const direct = sentinelWith(1);
    expect(toLogin(await authorize(direct, '198.51.100.30', { 'x-forwarded-for': '192.0.2.1' }))).toBe(true);
    expect(toLogin(await authorize(direct, '198.51.100.30', { 'x-forwarded-for': '192.0.2.2' }))).toBe(false);
  });

  it('gives one slot each to a concurrent burst: exactly the limit of interactions is stored', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(4, { store });
    const results = await Promise.all(Array.from({ length: 12 }, () => authorize(sentinel, '198.51.100.40')));
    expect(results.filter(toLogin)).toHaveLength(4);
    expect(results.filter((response) => refusal(response)?.get('error') === 'temporarily_unavailable')).toHaveLength(8);
    expect(interactionWrites(store.writes)).toHaveLength(4);
  });

  it('fails closed when the counter cannot be read: server_error to the app, reported, nothing stored', async () => {
    const errors: unknown[] = [];
    const store = recordingStore(failingReadsOf(new MemoryStore(), 'throttle-interaction:'));
    const sentinel = sentinelWith(10, { store, onError: (error) => void errors.push(error) });
    const response = await authorize(sentinel, '198.51.100.60');
    expect(refusal(response)?.get('error')).toBe('server_error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ message: 'store down' });
    expect(store.writes).toEqual([]);
  });

  it('a full counter area refuses new sign-ins and leaves the other throttle areas alone', async () => {
    const store = new MemoryStore({ securityMaxBytes: entryBytes('throttle-interaction:ip:192.0.2.100', '1') * 3 });
    const sentinel = sentinelWith(1000, { store, onError: () => {} });
    const results: boolean[] = [];
    for (let index = 0; index < 8; index += 1) results.push(toLogin(await authorize(sentinel, `192.0.2.${100 + index}`)));
    expect(results.slice(0, 3)).toEqual([true, true, true]);
    expect(results.slice(-2)).toEqual([false, false]);
    for (const area of ['throttle', 'throttle-par', 'throttle-device']) {
      await expect(store.increment(`${area}:ip:203.0.113.7`, 60_000)).resolves.toBe(1);
    }
  });
});

describe('interactions per IPv6 /48 (interactionsPerNetwork)', () => {
  const slash64 = (index: number) => `2001:db8:7:${index.toString(16)}::1`;

  it('bounds 70 distinct /64s of one /48 at ten times the per-address limit, while another /48 still gets through', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(5, { store });
    const results: boolean[] = [];
    for (let index = 0; index < 70; index += 1) results.push(toLogin(await authorize(sentinel, slash64(index))));
    expect(results.slice(0, 50).every(Boolean)).toBe(true);
    expect(results.slice(50).some(Boolean)).toBe(false);
    expect(interactionWrites(store.writes)).toHaveLength(50);
    expect(await store.get('throttle-interaction:net:2001:db8:7')).toBe('50');
    const refused = refusal(await authorize(sentinel, slash64(70)));
    expect(refused?.get('error_description')).toContain('network');
    expect(toLogin(await authorize(sentinel, '2001:db8:8:1::1'))).toBe(true);
  });

  it('takes the network limit from the option, and defaults it to ten times the address limit', async () => {
    expect(makeSentinel().config.interactionsPerAddress).toBe(1000);
    expect(makeSentinel().config.interactionsPerNetwork).toBe(10_000);
    expect(sentinelWith(7).config.interactionsPerNetwork).toBe(70);
    const sentinel = sentinelWith(1, { interactionsPerNetwork: 3 });
    for (let index = 0; index < 3; index += 1) expect(toLogin(await authorize(sentinel, slash64(index)))).toBe(true);
    expect(toLogin(await authorize(sentinel, slash64(3)))).toBe(false);
    expect(() => createSentinel(baseOptions({ interactionsPerAddress: 0 }))).toThrow(ConfigurationError);
    expect(() => createSentinel(baseOptions({ interactionsPerNetwork: 1.5 }))).toThrow(ConfigurationError);
  });
});

describe('the account page, whose visits without a session start a sign-in', () => {
  it('counts under the same bound and answers 429 with Retry-After (no app to go back to)', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(2, { store, account: { enabled: true } });
    const visit = () => call(sentinel, { path: `${ACCOUNT_PATH}/account`, ip: '198.51.100.77' });
    expect((await visit()).status).toBe(303);
    expect(toLogin(await authorize(sentinel, '198.51.100.77'))).toBe(true);
    store.reset();
    const refused = await visit();
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('600');
    expect(refused.headers.location).toBeUndefined();
    expect(store.writes).toEqual([]);
  });
});

describe("the operator console's sign-in, which anyone may start", () => {
  it('counts under the same bound and answers 429 with Retry-After, storing no pending sign-in', async () => {
    const store = recordingStore(new MemoryStore());
    const events: SentinelEvent[] = [];
    const sentinel = sentinelWith(2, { store, onEvent: (event) => void events.push(event) });
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const start = (ip: string) =>
      operatorConsole.handle({
        method: 'GET',
        path: '/console/sign-in',
        query: new URLSearchParams({ account: ACCOUNT }),
        headers: {},
        ip,
      });
    expect((await start('198.51.100.77'))?.status).toBe(303);
    expect(toLogin(await authorize(sentinel, '198.51.100.77'))).toBe(true);
    store.reset();
    const refused = await start('198.51.100.77');
    expect(refused?.status).toBe(429);
    expect(refused?.headers['retry-after']).toBe('600');
    expect(refused?.headers.location).toBeUndefined();
    expect(refused?.headers['set-cookie']).toBeUndefined();
    expect(String(refused?.body)).toContain('Too many sign-ins were started from this address');
    expect(store.writes.filter((write) => write.key.startsWith('console-sign-in:'))).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'console.denied', action: 'sign-in', reason: 'throttled' });
    // Another address still starts one.
    expect((await start('198.51.100.78'))?.status).toBe(303);
  });
});

describe("RP-initiated logout's confirmation page, which any signed-in browser can ask for", () => {
  const endSession = (sentinel: Sentinel, cookie: string, query: Record<string, string> = {}) =>
    call(sentinel, {
      path: `${ACCOUNT_PATH}/end_session`,
      query: new URLSearchParams(query),
      headers: { cookie: `sentinel_session=${cookie}` },
      ip: '198.51.100.88',
    });
  const confirmations = (writes: { key: string }[]) => writes.filter((write) => write.key.startsWith('end-session:'));

  it('counts each stored confirmation under the same bound and answers 429 with Retry-After, storing none', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(2, { store });
    const { cookie } = await signInWithSession(sentinel, MAIN_APP);
    store.reset();
    for (let index = 0; index < 2; index += 1) expect((await endSession(sentinel, cookie)).body).toContain('name="confirmation"');
    expect(confirmations(store.writes)).toHaveLength(2);
    store.reset();
    const refused = await endSession(sentinel, cookie);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('600');
    // Only the session's idle refresh: no confirmation, not even the counter (refused after a read).
    expect(store.writes.filter((write) => !write.key.startsWith('session:'))).toEqual([]);
    expect(refused.headers['set-cookie']).toBeUndefined();
    // The bound is the address's, shared with /authorize.
    expect(refusal(await authorize(sentinel, '198.51.100.88'))?.get('error')).toBe('temporarily_unavailable');
  });

  it('counts a parked logout post once: its GET stores the confirmation on the slot the post took', async () => {
    const sentinel = sentinelWith(2);
    const { cookie } = await signInWithSession(sentinel, MAIN_APP);
    const parked = await postForm(sentinel, `${ACCOUNT_PATH}/end_session`, `client_id=${MAIN_APP.clientId}`, { ip: '198.51.100.88' });
    expect(parked.status).toBe(303);
    const [path, query] = String(parked.headers.location).split('?', 2) as [string, string];
    const forwarded = await call(sentinel, { path, query, headers: { cookie: `sentinel_session=${cookie}` }, ip: '198.51.100.88' });
    expect(forwarded.body).toContain('name="confirmation"');
    expect((await endSession(sentinel, cookie)).body).toContain('name="confirmation"');
    expect((await endSession(sentinel, cookie)).status).toBe(429);
  });

  it('does not count a logout that stores no confirmation (the hint names the browser session)', async () => {
    const sentinel = sentinelWith(1);
    const { cookie, tokens } = await signInWithSession(sentinel, MAIN_APP);
    expect(toLogin(await authorize(sentinel, '198.51.100.88'))).toBe(true);
    const response = await endSession(sentinel, cookie, { id_token_hint: tokens.idToken });
    expect(response.status).toBe(200);
    expect(response.body).not.toContain('name="confirmation"');
  });
});
