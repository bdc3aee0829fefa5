/**
 * Pushed authorization requests (RFC 9126): push, single-use `request_uri` of 60 s, and the error redirects of a
 * reused, expired or foreign `request_uri`; `requirePushedAuthorizationRequests`; pushes that are refused.
 */
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSentinel, type Store, type SwapEntry } from '../src/index.js';
import {
  ACCOUNT,
  baseOptions,
  basic,
  CLIENT_ID,
  CLIENT_SECRET,
  OTHER_CLIENT_ID,
  PUBLIC_CLIENT_ID,
  REDIRECT_URI,
} from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import { clientKey, dpopProof } from './helpers/key-bound.js';
import { parseLocation, signIn } from './helpers/login-drive.js';
import { pkcePair } from './helpers/pkce.js';

const PAR_PATH = `/sentinel/api/account/${ACCOUNT}/par`;
const AUTHORIZE_PATH = `/sentinel/api/account/${ACCOUNT}/authorize`;
const SECOND_CLIENT_ID = 'bbbbbbbb-cccc-4ddd-8eee-ffffffffffff';
const SECOND_SECRET = 'second-client-secret-for-par-tests-only';

/** A Store with a clock the test moves: real TTL semantics, no waiting. */
class ClockStore implements Store {
  now = 0;
  readonly #entries = new Map<string, { value: string; until: number }>();
  #live(key: string): string | null {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.until <= this.now) return null;
    return entry.value;
  }
  async get(key: string): Promise<string | null> {
    return this.#live(key);
  }
  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.#entries.set(key, { value, until: this.now + ttlMs });
  }
  async take(key: string): Promise<string | null> {
    const value = this.#live(key);
    this.#entries.delete(key);
    return value;
  }
  async delete(key: string): Promise<void> {
    this.#entries.delete(key);
  }
  async increment(key: string, ttlMs: number): Promise<number> {
    const count = Number(this.#live(key) ?? '0') + 1;
    const until = this.#entries.get(key)?.until;
    this.#entries.set(key, { value: String(count), until: count === 1 || until === undefined ? this.now + ttlMs : until });
    return count;
  }
  // Store.swap: compare every expectation, then write every value; one synchronous step, so atomic here.
  async swap(entries: readonly SwapEntry[]): Promise<boolean> {
    if (entries.some((entry) => this.#live(entry.key) !== entry.expect)) return false;
    for (const entry of entries) {
      if (entry.value === null) this.#entries.delete(entry.key);
      else this.#entries.set(entry.key, { value: entry.value, until: this.now + (entry.ttlMs ?? 0) });
    }
    return true;
  }
}

const open: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

async function start(apps: Record<string, unknown>[] = []) {
  const store = new ClockStore();
  const options = baseOptions({ store });
  const sentinel = createSentinel({
    ...options,
    apps: [
      ...(options.apps ?? []),
      {
        accountId: ACCOUNT,
        clientId: SECOND_CLIENT_ID,
        clientSecret: SECOND_SECRET,
        redirectUris: ['https://second.example.com/cb'],
        grantTypes: ['authorization_code'],
      },
      ...(apps as never[]),
    ],
  });
  const mounted = await HOSTS[2]!.mount(sentinel);
  open.push(mounted);
  return { server: mounted.server, store };
}

async function push(server: unknown, form: Record<string, string> = {}): Promise<request.Response> {
  return request(server as never)
    .post(PAR_PATH)
    .type('form')
    .send({
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      state: 'pushed-state',
      ...form,
    });
}

function authorize(server: unknown, query: Record<string, string>): request.Test {
  return request(server as never).get(`${AUTHORIZE_PATH}?${new URLSearchParams(query)}`);
}

function expectErrorRedirect(response: request.Response, redirectUri: string, error: string): URL {
  expect(response.status).toBe(302);
  const location = new URL(response.headers.location as string);
  expect(location.origin + location.pathname).toBe(redirectUri);
  expect(location.searchParams.get('error')).toBe(error);
  expect(location.searchParams.get('code')).toBeNull();
  return location;
}

describe('pushed authorization requests', () => {
  it('answers 201 with a single-use request_uri valid for 60 s, which /authorize accepts', async () => {
    const { server } = await start();
    const pushed = await push(server);
    expect(pushed.status).toBe(201);
    expect(pushed.headers['cache-control']).toBe('no-store');
    expect(pushed.body.expires_in).toBe(60);
    expect(pushed.body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/);
    const first = await authorize(server, { client_id: CLIENT_ID, request_uri: pushed.body.request_uri });
    expect(first.status).toBe(302);
    expect(first.headers.location).toContain('/login?interaction=');
  });

  it('uses only the pushed parameters (the URL cannot swap the redirect URI or state)', async () => {
    const { server } = await start();
    const pushed = await push(server, { response_type: 'token' });
    expect(pushed.status).toBe(400);
    expect(pushed.body.error).toBe('unsupported_response_type');
    const good = await push(server);
    const response = await authorize(server, {
      client_id: CLIENT_ID,
      request_uri: good.body.request_uri,
      response_type: 'token',
      state: 'from-the-url',
    });
    expect(response.headers.location).toContain('/login?interaction=');
  });

  it('redirects with invalid_request_uri when the request_uri is reused', async () => {
    const { server } = await start();
    const { request_uri } = (await push(server)).body as { request_uri: string };
    expect((await authorize(server, { client_id: CLIENT_ID, request_uri })).headers.location).toContain('/login?interaction=');
    const again = await authorize(server, { client_id: CLIENT_ID, request_uri });
    expectErrorRedirect(again, REDIRECT_URI, 'invalid_request_uri');
  });

  it('redirects with invalid_request for a request_uri given twice (RFC 6749 §3.1), and leaves it usable', async () => {
    const { server } = await start();
    const { request_uri } = (await push(server)).body as { request_uri: string };
    const twice = await request(server as never).get(
      `${AUTHORIZE_PATH}?${new URLSearchParams([
        ['client_id', CLIENT_ID],
        ['request_uri', request_uri],
        ['request_uri', request_uri],
      ])}`,
    );
    const location = expectErrorRedirect(twice, REDIRECT_URI, 'invalid_request');
    expect(location.searchParams.get('error_description')).toBe('parameter request_uri is given more than once');
    expect((await authorize(server, { client_id: CLIENT_ID, request_uri })).headers.location).toContain('/login?interaction=');
  });

  it('lets exactly one of 10 concurrent uses of a request_uri through', async () => {
    const { server } = await start();
    const { request_uri } = (await push(server)).body as { request_uri: string };
    const answers = await Promise.all(Array.from({ length: 10 }, () => authorize(server, { client_id: CLIENT_ID, request_uri })));
    const through = answers.filter((answer) => String(answer.headers.location).includes('/login?interaction='));
    expect(through).toHaveLength(1);
    for (const answer of answers.filter((one) => !through.includes(one))) expectErrorRedirect(answer, REDIRECT_URI, 'invalid_request_uri');
  });

  it('redirects with invalid_request_uri when the request_uri has expired (after 60 s)', async () => {
    const { server, store } = await start();
    const { request_uri } = (await push(server)).body as { request_uri: string };
    store.now += 60_001;
    const late = await authorize(server, { client_id: CLIENT_ID, request_uri });
    expectErrorRedirect(late, REDIRECT_URI, 'invalid_request_uri');
  });

  it('redirects with invalid_request_uri when the request_uri belongs to another client, and leaves it usable', async () => {
    const { server } = await start();
    const { request_uri } = (await push(server)).body as { request_uri: string };
    const foreign = await authorize(server, { client_id: SECOND_CLIENT_ID, request_uri });
    expectErrorRedirect(foreign, 'https://second.example.com/cb', 'invalid_request_uri');
    expect((await authorize(server, { client_id: CLIENT_ID, request_uri })).headers.location).toContain('/login?interaction=');
  });

  it('refuses a plain authorization request from an app with requirePushedAuthorizationRequests', async () => {
    const { server } = await start([
      {
        accountId: ACCOUNT,
        clientId: 'dddddddd-eeee-4fff-8000-111111111111',
        clientSecret: 'par-only-client-secret-for-tests',
        redirectUris: ['https://par-only.example.com/cb'],
        grantTypes: ['authorization_code'],
        requirePushedAuthorizationRequests: true,
      },
    ]);
    const plain = await authorize(server, { client_id: 'dddddddd-eeee-4fff-8000-111111111111', response_type: 'code' });
    expectErrorRedirect(plain, 'https://par-only.example.com/cb', 'invalid_request');
  });

  it('refuses an unauthenticated push, a push naming another client, and a push carrying request_uri', async () => {
    const { server } = await start();
    const anonymous = await push(server, { client_secret: 'wrong' });
    expect(anonymous.body.error).toBe('invalid_client');
    const other = await push(server, { client_id: OTHER_CLIENT_ID });
    expect(other.body.error).toBe('invalid_client');
    const nested = await push(server, { request_uri: 'urn:ietf:params:oauth:request_uri:abc' });
    expect(nested.status).toBe(400);
    expect(nested.body.error).toBe('invalid_request');
  });

  it('answers 413 to a push longer than an authorization request may be (RFC 9126 §2.3), and stores nothing', async () => {
    const { server, store } = await start();
    const stored = vi.spyOn(store, 'set');
    // Within the form body limit, over the 8192 characters an authorization request may have.
    const long = await push(server, { state: 'x'.repeat(9000) });
    expect(long.status).toBe(413);
    expect(long.body.error).toBe('invalid_request');
    expect(long.body.request_uri).toBeUndefined();
    expect(stored.mock.calls.filter(([key]) => key.startsWith('par:'))).toEqual([]);
    expect((await push(server, { state: 'x'.repeat(7000) })).status).toBe(201);
  });

  it('keeps a long pushed request while the user signs in, and delivers its state with the code', async () => {
    // Longer than a plain authorization request may park for a sign-in (4,096 characters), within what a push may
    // carry (8,192): the push was client-authenticated and counted, so the sign-in must not refuse it afterwards.
    const { server } = await start();
    const state = 's'.repeat(7000);
    const { request_uri } = (await push(server, { state })).body as { request_uri: string };
    const agent = request.agent(server as never);
    const done = await signIn(agent, `${AUTHORIZE_PATH}?${new URLSearchParams({ client_id: CLIENT_ID, request_uri })}`);
    const { base, params } = parseLocation(done);
    expect(base).toBe(REDIRECT_URI);
    expect(params.get('error')).toBeNull();
    expect(params.get('code')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(params.get('state')).toBe(state);
  });

  it('still refuses a pushed request whose sign-in would park more than a push of printable text', async () => {
    // Control characters are six characters each in JSON: 4000 of them exceed the pushed cap (20,480). Back to the
    // app as invalid_request, without the state that made it too long, and nothing parked.
    const { server, store } = await start();
    const { request_uri } = (await push(server, { state: '\u0001'.repeat(4000) })).body as { request_uri: string };
    const stored = vi.spyOn(store, 'set');
    const response = await authorize(server, { client_id: CLIENT_ID, request_uri });
    const location = expectErrorRedirect(response, REDIRECT_URI, 'invalid_request');
    expect(location.searchParams.get('error_description')).toContain('over 20480 characters');
    expect(location.searchParams.get('state')).toBeNull();
    expect(stored.mock.calls.filter(([key]) => key.startsWith('interaction:'))).toEqual([]);
  });

  it('lets a public client push with PKCE (RFC 9126 §2: public clients may use PAR)', async () => {
    const { server } = await start();
    const { challenge } = pkcePair();
    const pushed = await request(server).post(PAR_PATH).type('form').send({
      client_id: PUBLIC_CLIENT_ID,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(pushed.status).toBe(201);
    const withoutPKCE = await request(server)
      .post(PAR_PATH)
      .type('form')
      .send({ client_id: PUBLIC_CLIENT_ID, response_type: 'code', redirect_uri: REDIRECT_URI });
    expect(withoutPKCE.status).toBe(400);
    expect(withoutPKCE.body.error).toBe('invalid_request');
  });

  it('reads an empty client_id or dpop_jkt in a push as omitted (RFC 6749 §3.1)', async () => {
    const { server, store } = await start();
    // Authenticated by Basic, with `client_id=` in the body: the client is the header's.
    const basicPush = await request(server as never)
      .post(PAR_PATH)
      .set('authorization', basic(CLIENT_ID, CLIENT_SECRET))
      .type('form')
      .send({ client_id: '', response_type: 'code', redirect_uri: REDIRECT_URI, state: 'basic-state' });
    expect([basicPush.status, basicPush.body.error_description]).toEqual([201, undefined]);
    const fromBasic = await authorize(server, { client_id: CLIENT_ID, request_uri: basicPush.body.request_uri });
    expect(fromBasic.headers.location).toContain('/login?interaction=');
    // With a DPoP proof and `dpop_jkt=`: the code is bound to the proof's key, as without the empty parameter.
    const key = await clientKey();
    const proof = await dpopProof(key, { htm: 'POST', htu: `http://localhost${PAR_PATH}` });
    const bound = await request(server as never)
      .post(PAR_PATH)
      .set('DPoP', proof)
      .type('form')
      .send({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, response_type: 'code', redirect_uri: REDIRECT_URI, dpop_jkt: '' });
    expect([bound.status, bound.body.error_description]).toEqual([201, undefined]);
    const stored = vi.spyOn(store, 'set');
    const fromProof = await authorize(server, { client_id: CLIENT_ID, request_uri: bound.body.request_uri });
    expect(fromProof.headers.location).toContain('/login?interaction=');
    const parked = stored.mock.calls.find(([name]) => name.startsWith('interaction:'));
    expect(JSON.parse(parked?.[1] as string).request.dpopJkt).toBe(key.jkt);
  });
});
