/**
 * The console's callback when the service fails under it, through `handle()`: a store that fails on `code:` keys
 * makes the token endpoint answer `500 server_error` to the console's code exchange. The operator sees the console's
 * 500 page, not "the sign-in did not complete", and `onError` hears the store's failure once, from the token
 * endpoint. A refused exchange (4xx: the code redeemed already) is still the ordinary "try again" page. The
 * exchange's own `token.issued` names the operator's address and request id, as the callback's events do.
 */
import { describe, expect, it, vi } from 'vitest';
import { CONSOLE_CLIENT_ID, createConsole } from '../src/console/index.js';
import { contextOf } from '../src/http/context.js';
import {
  MemoryStore,
  type SentinelEvent,
  type SentinelOptions,
  type SentinelRequest,
  type SentinelResponse,
  type Store,
} from '../src/index.js';
import { digest } from '../src/lib/random-secrets.js';
import { ACCOUNT_PATH, call, openLogin, postForm, postLogin, setCookies } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, PASSWORD, USERNAME } from './helpers/fixtures.js';

const PAGE = `${ACCOUNT_PATH}/account`;

/** A MemoryStore whose every call on a key starting with `failing` rejects. */
function failingStore(): { store: Store; failOn: (prefix: string) => void } {
  const inner = new MemoryStore();
  let failing = '';
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const key = name === 'swap' ? (args[0] as { key: string }[])[0]?.key : args[0];
        if (failing !== '' && typeof key === 'string' && key.startsWith(failing)) {
          return Promise.reject(new Error(`store down (${String(name)})`));
        }
        return (value as (...all: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, failOn: (prefix) => (failing = prefix) };
}

function harness(overrides: Partial<SentinelOptions> = {}) {
  const reports: { error: unknown; route: string | undefined }[] = [];
  const { store, failOn } = failingStore();
  const sentinel = makeSentinel({
    store,
    account: { enabled: true },
    onError: (error, where) => reports.push({ error, route: where?.route }),
    ...overrides,
  });
  const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
  const consoleCall = async (request: Partial<SentinelRequest> & { path: string }): Promise<SentinelResponse> => {
    const response = await operatorConsole.handle({ method: 'GET', query: new URLSearchParams(), headers: {}, ...request });
    expect(response).not.toBeNull();
    return response as SentinelResponse;
  };
  return { sentinel, consoleCall, reports, failOn };
}
type Harness = ReturnType<typeof harness>;

/** Signs a browser in to the account page, starts a console sign-in there: the callback's query and its cookie. */
async function upToCallback(h: Harness): Promise<{ query: URLSearchParams; cookie: string }> {
  const start = await call(h.sentinel, { path: PAGE });
  const interaction = /interaction=([A-Za-z0-9_-]{43})$/.exec(String(start.headers.location))?.[1] as string;
  const csrf = await openLogin(h.sentinel, interaction);
  const done = await postLogin(h.sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  const session = (setCookies(done).find((line) => line.startsWith('sentinel_session=')) as string).split(';')[0] as string;
  const started = await h.consoleCall({ path: '/console/sign-in', query: new URLSearchParams({ account: ACCOUNT }) });
  const cookie = (setCookies(started)[0] as string).split(';')[0] as string;
  const authorize = new URL(String(started.headers.location));
  const authorized = await call(h.sentinel, { path: authorize.pathname, query: authorize.searchParams, headers: { cookie: session } });
  const callback = new URL(String(authorized.headers.location));
  expect(callback.pathname).toBe('/console/callback');
  return { query: callback.searchParams, cookie };
}

describe('console: the callback when the service fails under it', () => {
  it('answers 500 when the token endpoint cannot redeem the code (store down), reported once with its cause', async () => {
    const h = harness();
    const { query, cookie } = await upToCallback(h);
    h.failOn('code:');
    const answer = await h.consoleCall({ path: '/console/callback', query, headers: { cookie } });
    h.failOn('');
    expect(answer.status).toBe(500);
    expect(answer.body).not.toContain('did not complete');
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(h.reports.map(({ error, route }) => [String(error), route])).toEqual([['Error: store down (get)', 'token']]);
  });

  it('still shows the ordinary "try again" page (400) for a refused exchange, with nothing reported', async () => {
    const h = harness();
    const { query, cookie } = await upToCallback(h);
    // The code redeemed first by someone holding the verifier: the console's own exchange is refused (invalid_grant).
    const state = query.get('state') as string;
    const pending = JSON.parse(String(await contextOf(h.sentinel).store.get(`console-sign-in:${digest(state)}`))) as { verifier: string };
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code: query.get('code') as string,
      redirect_uri: 'http://localhost/console/callback',
      client_id: CONSOLE_CLIENT_ID,
      code_verifier: pending.verifier,
    });
    expect((await postForm(h.sentinel, `${ACCOUNT_PATH}/token`, body.toString())).status).toBe(200);
    const refused = await h.consoleCall({ path: '/console/callback', query, headers: { cookie } });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('did not complete');
    expect(h.reports).toEqual([]);
  });

  it('takes a pending sign-in that does not parse as none: the "try again" page, nothing of it reported', async () => {
    const h = harness();
    const { query, cookie } = await upToCallback(h);
    const key = `console-sign-in:${digest(query.get('state') as string)}`;
    // A record cut short: V8's JSON.parse error would quote it, verifier and all.
    await contextOf(h.sentinel).store.set(key, 'Vq8rT2', 60_000);
    const answer = await h.consoleCall({ path: '/console/callback', query, headers: { cookie } });
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('did not complete');
    expect(h.reports).toEqual([]);
  });
});

describe("console: the code exchange's own audit event", () => {
  it("names the operator's address and request id behind a proxy, not the proxy's", async () => {
    const events: SentinelEvent[] = [];
    const h = harness({ trustProxy: 1, onEvent: (event) => events.push(event) });
    const { query, cookie } = await upToCallback(h);
    const done = await h.consoleCall({
      path: '/console/callback',
      query,
      ip: '10.0.0.2',
      headers: { cookie, 'x-forwarded-for': '203.0.113.7', 'x-request-id': 'req-console-1' },
    });
    expect(done.status).toBe(303);
    const exchange = events.find((event) => event.type === 'token.issued' && event.clientId === CONSOLE_CLIENT_ID);
    expect(exchange).toMatchObject({ ip: '203.0.113.7', requestId: 'req-console-1' });
    expect(events.find((event) => event.type === 'console.signed_in')).toMatchObject({ ip: '203.0.113.7', requestId: 'req-console-1' });
  });
});

describe('console: console.signed_in stands for a session that exists', () => {
  it('keeps no console session when onEvent vetoes console.signed_in: a 500, no cookie, no record', async () => {
    const memory = new MemoryStore();
    const set = vi.spyOn(memory, 'set');
    const onEvent = (event: SentinelEvent): void => {
      if (event.type === 'console.signed_in') throw new Error('console.signed_in vetoed');
    };
    const h = harness({ store: memory, onEvent });
    const { query, cookie } = await upToCallback(h);
    const answer = await h.consoleCall({ path: '/console/callback', query, headers: { cookie } });
    expect(answer.status).toBe(500);
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(h.reports.map(({ error }) => String(error))).toEqual(['Error: console.signed_in vetoed']);
    // The record the sign-in wrote is gone again: no orphan session that no cookie points to.
    const written = set.mock.calls.map(([key]) => key).filter((key) => key.startsWith('console-session:'));
    expect(written).toHaveLength(1);
    expect(await memory.get(written[0] as string)).toBeNull();
  });

  it('announces no sign-in when the console session cannot be stored', async () => {
    const events: SentinelEvent[] = [];
    const h = harness({ onEvent: (event) => events.push(event) });
    const { query, cookie } = await upToCallback(h);
    h.failOn('console-session:');
    const answer = await h.consoleCall({ path: '/console/callback', query, headers: { cookie } });
    h.failOn('');
    expect(answer.status).toBe(500);
    expect(events.map((event) => event.type)).not.toContain('console.signed_in');
  });
});
