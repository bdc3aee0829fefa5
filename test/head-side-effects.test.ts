/**
 * A method a route does not take is a 405 naming it, within bounds (the last case below). HEAD on routes whose GET
 * changes state: refused with 405 (its `Allow` without HEAD) before any handler runs, so a
 * HEAD neither issues a code, stores an interaction, ends a session nor starts a console sign-in. The public
 * documents and probes still answer HEAD as GET (test/adapters.test.ts checks the bytes on the wire).
 */
import { describe, expect, it } from 'vitest';
import { createConsole } from '../src/console/index.js';
import { createRouter } from '../src/http/router.js';
import { ROUTES } from '../src/http/routes.js';
import { MemoryStore, type SentinelEvent, type SentinelRequest } from '../src/index.js';
import { consoleRequest } from './helpers/console-session.js';
import { ACCOUNT_PATH, AUTHORIZE_PATH, authorizeQuery, call, recordingStore, TOKEN_PATH } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { MAIN_APP, pkceQuery, sessionWorks, signInWithSession } from './helpers/logout-flow.js';

function recorded() {
  const store = recordingStore(new MemoryStore());
  const events: SentinelEvent[] = [];
  const sentinel = makeSentinel({ store, onEvent: (event) => void events.push(event) });
  return { sentinel, store, events };
}

describe('HEAD on a route whose GET has effects', () => {
  it('is a 405 at /authorize with a session: no code, no code.issued event, nothing stored', async () => {
    const { sentinel, store, events } = recorded();
    const { cookie } = await signInWithSession(sentinel, MAIN_APP);
    store.reset();
    events.length = 0;
    const { query } = pkceQuery(MAIN_APP);
    const head = await call(sentinel, { method: 'HEAD', path: AUTHORIZE_PATH, query, headers: { cookie: `sentinel_session=${cookie}` } });
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe('GET, POST');
    expect(head.headers.location).toBeUndefined();
    expect(events.map((event) => event.type)).not.toContain('code.issued');
    expect(store.writes).toEqual([]);
  });

  it('is a 405 at /authorize without a session: no interaction stored', async () => {
    const { sentinel, store } = recorded();
    const head = await call(sentinel, { method: 'HEAD', path: AUTHORIZE_PATH, query: authorizeQuery() });
    expect(head.status).toBe(405);
    expect(store.writes).toEqual([]);
  });

  it('is a 405 at end_session: the session lives on and nothing is stored', async () => {
    const { sentinel, store } = recorded();
    const { cookie } = await signInWithSession(sentinel, MAIN_APP);
    store.reset();
    const head = await call(sentinel, {
      method: 'HEAD',
      path: `${ACCOUNT_PATH}/end_session`,
      headers: { cookie: `sentinel_session=${cookie}` },
    });
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe('GET, POST');
    expect(store.writes).toEqual([]);
    expect(await sessionWorks(sentinel, cookie)).toBe(true);
  });

  it('is a 405 on the login, device and account pages', async () => {
    const { sentinel, store } = recorded();
    for (const page of ['login', 'login/totp', 'device', 'device/confirm', 'account']) {
      const head = await call(sentinel, { method: 'HEAD', path: `${ACCOUNT_PATH}/${page}` });
      expect(head.status, page).toBe(405);
      expect(String(head.headers.allow), page).not.toContain('HEAD');
    }
    expect(store.writes).toEqual([]);
  });

  it('is a 405 in the console: no sign-in started', async () => {
    const store = recordingStore(new MemoryStore());
    const operatorConsole = createConsole(makeSentinel({ store }), { authorize: () => 'admin' });
    const head = await operatorConsole.handle({
      ...consoleRequest('HEAD', '/console/sign-in'),
      query: new URLSearchParams({ account: ACCOUNT }),
    });
    expect(head?.status).toBe(405);
    expect(head?.headers.allow).toBe('GET, POST');
    expect(head?.headers.location).toBeUndefined();
    expect(store.writes).toEqual([]);
  });
});

describe('HEAD on a side-effect-free route', () => {
  it('answers as GET for the public documents and probes, and only for them', async () => {
    const sentinel = makeSentinel();
    for (const path of ['/sentinel/well-known/jwks', `${ACCOUNT_PATH}/.well-known/openid-configuration`, '/sentinel/health/live']) {
      const get = await call(sentinel, { path });
      const head = await call(sentinel, { method: 'HEAD', path });
      expect(head.status, path).toBe(get.status);
      expect(head.headers['content-type'], path).toBe(get.headers['content-type']);
    }
    const router = createRouter(ROUTES, '/sentinel');
    const headable = ROUTES.filter((route) => route.headAsGet === true).map((route) => route.name);
    expect(headable.sort()).toEqual(
      [
        'account-jwks',
        'account-jwks-well-known',
        'health-live',
        'health-ready',
        'jwks',
        'metadata',
        'metadata-appended',
        'openid-configuration',
      ].sort(),
    );
    const head = {
      method: 'HEAD',
      path: '/sentinel/well-known/jwks',
      query: new URLSearchParams(),
      headers: {},
    } as unknown as SentinelRequest;
    expect(router(head)?.allowed).toBe(true);
  });
});

describe('a method no route has', () => {
  it('is a 405 whose description quotes at most 16 characters of it', async () => {
    const { sentinel } = recorded();
    const answer = await call(sentinel, { method: 'X'.repeat(5000), path: TOKEN_PATH });
    expect(answer.status).toBe(405);
    const description = String(JSON.parse(String(answer.body)).error_description);
    expect(description).toBe(`method ${'X'.repeat(16)}... is not allowed here`);
  });
});
