/**
 * Refusals naming an account that does not exist are answered as before but emit no `token.denied` /
 * `authorize.denied`: anyone can name any number of made-up accounts, and an event each would grow the append-only
 * audit log at the request rate and push real accounts' events out of the in-memory buffer, for accounts no operator
 * can read. A real account's refusals are still audited, and an AppStore that fails keeps the 4xx (the event is then
 * emitted: the request is refused anyway).
 */
import { describe, expect, it } from 'vitest';
import type { App, AppStore } from '../src/apps/app.js';
import { hashClientSecret } from '../src/apps/client-secrets.js';
import { deniedAccountCheck } from '../src/http/denied-accounts.js';
import { MemoryStore, type SentinelEvent } from '../src/index.js';
import { call, postForm } from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, CONSUMER_UUID, makeSentinel, REDIRECT_URI } from './helpers/fixtures.js';

const DENIED = new Set(['token.denied', 'authorize.denied']);
const WRONG_BASIC = `Basic ${Buffer.from(`${CLIENT_ID}:wrong-secret`).toString('base64')}`;

/** One refusable request of each endpoint whose refusals the edge audits, in `account`. */
function requests(
  account: string,
): { name: string; run: (sentinel: ReturnType<typeof makeSentinel>) => Promise<{ status: number; body?: string }> }[] {
  const base = `/sentinel/api/account/${account}`;
  const authorization = { authorization: WRONG_BASIC };
  const form = 'grant_type=client_credentials';
  const post = (path: string, body: string) => (sentinel: ReturnType<typeof makeSentinel>) =>
    postForm(sentinel, path, body, { headers: authorization });
  return [
    {
      name: 'authorize',
      run: (sentinel) =>
        call(sentinel, {
          path: `${base}/authorize`,
          query: new URLSearchParams({ client_id: 'nobody', response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'openid' }),
        }),
    },
    { name: 'token', run: post(`${base}/token`, form) },
    { name: 'app-token-v1', run: post(`${base}/app/token?state=${CONSUMER_UUID}`, form) },
    { name: 'app-token-v2', run: post(`/sentinel/api/v2/account/${account}/app/token?state=${CONSUMER_UUID}`, form) },
    { name: 'token-revoke', run: post(`${base}/token/revoke`, 'token=abc') },
    { name: 'token-introspect', run: post(`${base}/token/introspect`, 'token=abc') },
    { name: 'par', run: post(`${base}/par`, `response_type=code&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`) },
    { name: 'device-authorization', run: post(`${base}/device_authorization`, 'scope=openid') },
  ];
}

function harness(overrides: Parameters<typeof makeSentinel>[0] = {}) {
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  const sentinel = makeSentinel({
    store: new MemoryStore(),
    onEvent: (event) => events.push(event),
    onError: (error) => errors.push(error),
    ...overrides,
  });
  return { sentinel, events, errors };
}

/** What a client sees of an answer: its status and OAuth error code (or the page, for an HTML answer). */
function answer(response: { status: number; body?: unknown }): string {
  const text = typeof response.body === 'string' ? response.body : '';
  try {
    return `${response.status} ${(JSON.parse(text) as { error?: string }).error}`;
  } catch {
    return `${response.status} page`;
  }
}

/** The answers each endpoint gave a made-up account before the fix (status and error code). */
const PINNED: Record<string, string> = {
  authorize: '401 page',
  token: '401 invalid_client',
  'app-token-v1': '401 invalid_client',
  'app-token-v2': '401 invalid_client',
  'token-revoke': '401 invalid_client',
  'token-introspect': '401 invalid_client',
  par: '401 invalid_client',
  'device-authorization': '401 invalid_client',
};

describe('refusals naming an account that does not exist', () => {
  it('a flood of made-up ids at every audited endpoint leaves no event and unchanged answers', async () => {
    const { sentinel, events, errors } = harness();
    for (let n = 0; n < 25; n += 1) {
      for (const request of requests(`made-up-${n}`)) {
        expect(answer(await request.run(sentinel)), request.name).toBe(PINNED[request.name]);
      }
    }
    expect(events.filter((event) => DENIED.has(event.type))).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("a real account's refusals still emit, with the same fields", async () => {
    const { sentinel, events } = harness();
    for (const request of requests(ACCOUNT)) {
      const before = events.length;
      expect(answer(await request.run(sentinel)), request.name).toBe(PINNED[request.name]);
      expect(
        events.slice(before).filter((event) => DENIED.has(event.type)),
        request.name,
      ).toHaveLength(1);
    }
    const denied = events.filter((event) => DENIED.has(event.type));
    expect(denied.every((event) => event.accountId === ACCOUNT)).toBe(true);
    expect(denied.find((event) => event.type === 'token.denied')).toMatchObject({ error: 'invalid_client' });
    expect(denied.find((event) => event.type === 'authorize.denied')).toBeDefined();
  });

  it('a failing AppStore keeps the 4xx, emits the event (fail open for the audit only) and reports the failure', async () => {
    const app: App = {
      accountId: ACCOUNT,
      clientId: CLIENT_ID,
      clientSecretHash: hashClientSecret('the-right-secret'),
      redirectUris: [REDIRECT_URI],
      grantTypes: ['client_credentials'],
      tokenEndpointAuthMethod: 'client_secret_basic',
    };
    const outage = new Error('app store down');
    const appStore: AppStore = {
      findApp: (accountId, clientId) => (accountId === ACCOUNT && clientId === CLIENT_ID ? app : null),
      hasAccount: () => Promise.reject(outage),
    };
    const { sentinel, events, errors } = harness({ apps: [], appStore });
    const response = await postForm(sentinel, `/sentinel/api/account/${ACCOUNT}/token`, 'grant_type=client_credentials', {
      headers: { authorization: WRONG_BASIC },
    });
    expect(answer(response)).toBe('401 invalid_client');
    expect(events.filter((event) => event.type === 'token.denied')).toMatchObject([{ accountId: ACCOUNT, error: 'invalid_client' }]);
    expect(errors).toEqual([outage]);
  });
});

describe('deniedAccountCheck', () => {
  it('asks the AppStore once for a repeated made-up id, and every time for a real one', async () => {
    const asked: string[] = [];
    const audited = deniedAccountCheck({
      hasAccount: (accountId) => {
        asked.push(accountId);
        return Promise.resolve(accountId === 'real');
      },
    });
    const fail = (): void => {
      throw new Error('not called');
    };
    for (let n = 0; n < 5; n += 1) {
      expect(await audited('made-up', fail)).toBe(false);
      expect(await audited('real', fail)).toBe(true);
    }
    expect(asked.filter((id) => id === 'made-up')).toHaveLength(1);
    expect(asked.filter((id) => id === 'real')).toHaveLength(5);
  });

  it('answers true and reports when the AppStore throws or rejects', async () => {
    const failures: unknown[] = [];
    const thrown = new Error('sync');
    const rejected = new Error('async');
    const syncCheck = deniedAccountCheck({
      hasAccount: () => {
        throw thrown;
      },
    });
    const asyncCheck = deniedAccountCheck({ hasAccount: () => Promise.reject(rejected) });
    expect(await syncCheck('x', (error) => failures.push(error))).toBe(true);
    expect(await asyncCheck('x', (error) => failures.push(error))).toBe(true);
    expect(failures).toEqual([thrown, rejected]);
  });
});
