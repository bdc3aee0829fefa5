/**
 * Floods and bounds: 100 000 abandoned authorize requests keep a MemoryStore bounded (the figure is
 * measured and printed); oversized query, body and header inputs are refused early, without storing or reading
 * them whole; failed logins are throttled per username and per client IP.
 */
import { connect } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MemoryStore, type Sentinel } from '../src/index.js';
import { createSession } from '../src/authorize/state/new-session.js';
import { sessionKey } from '../src/authorize/state/session.js';
import {
  AUTHORIZE_PATH,
  authorizeQuery,
  call,
  jsonOf,
  openLogin,
  postForm,
  postLogin,
  recordingStore,
  startInteraction,
  TOKEN_PATH,
} from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, PASSWORD, REDIRECT_URI, USERNAME } from './helpers/fixtures.js';
import { signInWithSession } from './helpers/logout-flow.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import { contextOf } from '../src/http/context.js';

const FLOOD = 100_000;
const END_SESSION_PATH = `/sentinel/api/account/${ACCOUNT}/end_session`;
const BOUND = 10_000;

/** A full garbage collection, so heap figures measure what is retained rather than what is not yet collected. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

function heapMB(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed / 1_048_576;
}

describe('a flood of abandoned authorize requests', () => {
  it(`${FLOOD.toLocaleString('en')} authorize requests without login keep MemoryStore({ max: ${BOUND} }) at ≤ ${BOUND} interactions`, async () => {
    const store = new MemoryStore({ max: BOUND });
    const sentinel = makeSentinel({ store });
    // A real user's device session from before the flood: a flood of interactions must not evict it.
    const sessionId = await createSession(contextOf(sentinel), { accountId: ACCOUNT, userId: 'u-before-flood', authTime: 1 });
    const query = authorizeQuery();
    const before = heapMB();
    let redirects = 0;
    for (let sent = 0; sent < FLOOD; sent += 1) {
      const response = await sentinel.handle({ method: 'GET', path: AUTHORIZE_PATH, query, headers: {}, ip: `198.51.100.${sent % 250}` });
      if (response?.status === 302) redirects += 1;
    }
    const after = heapMB();
    expect(redirects).toBe(FLOOD);
    // One cache per key prefix: interactions are capped at BOUND, the session and its user's session index are two
    // more entries, and each of the 250 addresses has its counter of interactions started (interactionsPerAddress).
    expect(store.size).toBeLessThanOrEqual(BOUND + 2 + 250);
    expect(store.size).toBeGreaterThanOrEqual(BOUND);
    expect(await store.get(sessionKey(sessionId))).not.toBeNull();
    const growth = after - before;
    console.info(
      `[floods] ${FLOOD} abandoned authorize requests, MemoryStore max ${BOUND}: ${store.size} entries kept, heap growth ${growth.toFixed(1)} MB (${((growth * 1_048_576) / BOUND).toFixed(0)} bytes per kept interaction)`,
    );
    // Bounded: ~1 KB per kept interaction; an unbounded store would retain ten times as many records.
    expect(growth).toBeLessThan(64);
    // The newest interactions still work after the flood.
    const { interaction } = await startInteraction(sentinel);
    expect(await openLogin(sentinel, interaction)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('oversized inputs are refused early', () => {
  let sentinel: Sentinel;
  let store: ReturnType<typeof recordingStore>;

  beforeAll(() => {
    store = recordingStore(new MemoryStore());
    sentinel = makeSentinel({ store });
  });

  it('a 1 MB state → 414 page, nothing stored', async () => {
    store.reset();
    const response = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ state: 'x'.repeat(1_048_576) }) });
    expect(response.status).toBe(414);
    expect(response.headers.location).toBeUndefined();
    expect(response.body).not.toContain('x'.repeat(100));
    expect(store.writes).toEqual([]);
  });

  it('end_session: a POST state past the 8 KiB cap but within bodyLimit → 413, no confirmation parked', async () => {
    const { cookie } = await signInWithSession(sentinel);
    const form = new URLSearchParams({ client_id: CLIENT_ID, post_logout_redirect_uri: REDIRECT_URI, state: 'x'.repeat(12_000) });
    expect(form.toString().length).toBeLessThan(sentinel.config.bodyLimit);
    store.reset();
    const withSession = await postForm(sentinel, END_SESSION_PATH, form.toString(), { headers: { cookie: `sentinel_session=${cookie}` } });
    expect(withSession.status).toBe(413);
    expect(store.writes).toEqual([]);
    // Without the cookie the POST would be parked (the whole state) for the GET it is forwarded to.
    const cookieless = await postForm(sentinel, END_SESSION_PATH, form.toString());
    expect([cookieless.status, cookieless.headers.location]).toEqual([413, undefined]);
    // Within the cap the confirmation page is still served.
    form.set('state', 'x'.repeat(3_000));
    const page = await postForm(sentinel, END_SESSION_PATH, form.toString(), { headers: { cookie: `sentinel_session=${cookie}` } });
    expect(page.status).toBe(200);
    expect(String(page.body)).toContain('name="confirmation"');
  });

  it('a long state within the interaction cap is still served (the bound is not a blanket refusal)', async () => {
    store.reset();
    const response = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ state: 'x'.repeat(3_000) }) });
    expect(response.status).toBe(302);
    // The address's counter of interactions started (interactionsPerAddress), then the interaction.
    expect(store.writes.map((write) => write.op)).toEqual(['increment', 'set']);
  });

  it('a body over the cap → 413 from the declared length, without calling the body reader', async () => {
    const reader = vi.fn(async () => 'grant_type=client_credentials');
    const response = await postForm(sentinel, TOKEN_PATH, reader, { headers: { 'content-length': String(50 * 1_048_576) } });
    expect(response.status).toBe(413);
    expect(jsonOf(response).error).toBe('invalid_request');
    expect(reader).not.toHaveBeenCalled();
  });

  it('a 1 MB Authorization header → 4xx, nothing stored', async () => {
    store.reset();
    const response = await postForm(sentinel, TOKEN_PATH, 'grant_type=authorization_code&code=abc', {
      headers: { authorization: `Basic ${'QUJD'.repeat(262_144)}` },
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(store.writes).toEqual([]);
  });

  it('a 1 MB username on the login form is refused without reaching the user store', async () => {
    const authenticate = vi.fn(async () => null);
    const guarded = makeSentinel({ users: { authenticate } });
    const { interaction } = await startInteraction(guarded);
    const csrf = await openLogin(guarded, interaction);
    const response = await postLogin(guarded, interaction, { csrf_token: csrf, username: 'u'.repeat(1_048_576), password: 'x' });
    expect(response.status).toBe(413);
    expect(authenticate).not.toHaveBeenCalled();
  });

  describe('over HTTP (Express)', () => {
    let host: MountedHost;
    const hostErrors: unknown[] = [];

    beforeAll(async () => {
      host = await HOSTS[1]!.mount(makeSentinel(), { onHostError: (error) => hostErrors.push(error) });
    });

    afterAll(async () => {
      await host.close();
    });

    /** Sends raw bytes and resolves with the first response bytes; the socket is then destroyed. */
    function rawExchange(head: string, body: Buffer): Promise<string> {
      const { port } = new URL(host.url);
      return new Promise((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write(head);
          socket.write(body);
        });
        let received = '';
        socket.on('data', (chunk: Buffer) => {
          received += chunk.toString('latin1');
          if (received.includes('\r\n\r\n')) {
            socket.destroy();
            resolve(received);
          }
        });
        socket.on('error', reject);
        socket.on('close', () => resolve(received));
      });
    }

    it('a body declared at 50 MB gets 413 after only 1 KB was sent (the rest is never awaited)', async () => {
      const head = `POST ${TOKEN_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${50 * 1_048_576}\r\n\r\n`;
      const answer = await rawExchange(head, Buffer.alloc(1024, 'a'));
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    });

    it('a 64 KB header is refused by the server before the service sees it, and the host keeps serving', async () => {
      const head = `GET ${AUTHORIZE_PATH}?client_id=${CLIENT_ID} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'h'.repeat(65_536)}\r\n\r\n`;
      const answer = await rawExchange(head, Buffer.alloc(0));
      expect(answer).toMatch(/^HTTP\/1\.1 431 /);
      const ping = await fetch(`${host.url}/host/ping`);
      expect(await ping.text()).toBe('pong');
      expect(hostErrors).toEqual([]);
    });

    it('a 1 MB query string is refused before the service sees it (431 or 414), and the host keeps serving', async () => {
      const head = `GET ${AUTHORIZE_PATH}?client_id=${CLIENT_ID}&state=${'s'.repeat(1_048_576)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
      const answer = await rawExchange(head, Buffer.alloc(0));
      expect(answer).toMatch(/^HTTP\/1\.1 (431|414) /);
      expect((await fetch(`${host.url}/host/ping`)).status).toBe(200);
    });
  });
});

describe('login throttling', () => {
  const LIMITS = { maxFailures: 3, maxFailuresPerIp: 6, windowSeconds: 900 };

  function throttledSentinel(): { sentinel: Sentinel; authenticate: ReturnType<typeof vi.fn> } {
    const users = baseOptions().users!;
    const authenticate = vi.fn((input: Parameters<typeof users.authenticate>[0]) => users.authenticate(input));
    return { sentinel: makeSentinel({ throttle: LIMITS, users: { authenticate } }), authenticate };
  }

  async function attempt(sentinel: Sentinel, username: string, password: string, ip: string): Promise<number> {
    const { interaction } = await startInteraction(sentinel, authorizeQuery(), ip);
    const csrf = await openLogin(sentinel, interaction);
    return (await postLogin(sentinel, interaction, { csrf_token: csrf, username, password }, ip)).status;
  }

  it('per username: after maxFailures from many addresses, even the right password is refused (429) without asking the user store', async () => {
    const { sentinel, authenticate } = throttledSentinel();
    for (let index = 0; index < LIMITS.maxFailures; index += 1) {
      expect(await attempt(sentinel, USERNAME, `wrong-${index}`, `192.0.2.${index + 1}`)).toBe(200);
    }
    const calls = authenticate.mock.calls.length;
    expect(await attempt(sentinel, USERNAME, PASSWORD, '192.0.2.200')).toBe(429);
    // Case and compatibility forms share one budget, and so do the spellings a user store may match to the same
    // user: accents (MySQL's default collation ignores them), a Turkish dotted or dotless i, invisible characters.
    const spellings = ['ALICE', 'ａｌｉｃｅ', 'alicé', 'àlice', 'ALİCE', 'alıce', 'al\u200Bice', 'alice\u00AD'];
    for (const [index, spelling] of spellings.entries()) {
      expect(await attempt(sentinel, spelling, PASSWORD, `192.0.2.${201 + index}`), spelling).toBe(429);
    }
    expect(authenticate.mock.calls.length).toBe(calls);
    // Another user on the same addresses is unaffected.
    expect(await attempt(sentinel, 'bob', 'whatever', '192.0.2.1')).toBe(200);
  });

  it('per IP: one address spraying many usernames is refused (429) for every username; another address is not', async () => {
    const { sentinel, authenticate } = throttledSentinel();
    for (let index = 0; index < LIMITS.maxFailuresPerIp; index += 1) {
      expect(await attempt(sentinel, `user-${index}`, 'guess', '203.0.113.66')).toBe(200);
    }
    const calls = authenticate.mock.calls.length;
    expect(await attempt(sentinel, 'user-new', 'guess', '203.0.113.66')).toBe(429);
    expect(await attempt(sentinel, USERNAME, PASSWORD, '203.0.113.66')).toBe(429);
    expect(authenticate.mock.calls.length).toBe(calls);
    expect(await attempt(sentinel, USERNAME, PASSWORD, '203.0.113.67')).toBe(303);
  });

  it('a throttled answer carries Retry-After and the standard error, and changes no counter', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ store, throttle: LIMITS });
    for (let index = 0; index < LIMITS.maxFailures; index += 1) await attempt(sentinel, USERNAME, `wrong-${index}`, '192.0.2.9');
    const { interaction } = await startInteraction(sentinel, authorizeQuery(), '192.0.2.10');
    const csrf = await openLogin(sentinel, interaction);
    store.reset();
    const response = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD }, '192.0.2.10');
    expect(response.status).toBe(429);
    expect(response.headers['retry-after']).toBe(String(LIMITS.windowSeconds));
    expect(response.body).toContain('temporarily_unavailable');
    expect(store.writes).toEqual([]);
  });
});
