/**
 * The operator console without a browser: its options, what is not its path, the in-memory event buffer, the
 * registry's disable/enable, the event taps, and the guards in front of every change (session, CSRF, account,
 * role, a failing `authorize`), driven through `handle()`. The pages and flows are in test/browser/console.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { verifyClientSecret } from '../src/apps/client-secrets.js';
import { MemoryAppStore } from '../src/apps/memory-app-store.js';
import { createConsole, MemoryEventLog } from '../src/console/index.js';
import { eventTaps, tapEvents } from '../src/events/event-taps.js';
import { contextOf } from '../src/http/context.js';
import { MemoryStore, type SentinelEvent } from '../src/index.js';
import { consoleRequest, operatorCookie } from './helpers/console-session.js';
import { ACCOUNT, CLIENT_ID, makeSentinel, OTHER_ACCOUNT } from './helpers/fixtures.js';

function event(at: number, overrides: Partial<SentinelEvent> = {}): SentinelEvent {
  return { type: 'session.created', at, accountId: ACCOUNT, userId: 'u-1', outcome: 'success', ...overrides } as SentinelEvent;
}

describe('console: options and paths', () => {
  it('refuses an unknown option, a missing authorize and a bad path', () => {
    const sentinel = makeSentinel();
    const authorize = () => 'admin' as const;
    expect(() => createConsole(sentinel, { authorize, pathh: '/x' } as never)).toThrow(/pathh/);
    expect(() => createConsole(sentinel, {} as never)).toThrow(/authorize/);
    expect(() => createConsole(sentinel, { authorize, path: 'console/' })).toThrow(/console.path/);
    expect(() => createConsole(sentinel, { authorize, sessionTtl: 5 })).toThrow(/sessionTtl/);
    expect(() => createConsole(sentinel, { authorize, idleTtl: 30 })).toThrow(/console\.idleTtl/);
    expect(() => createConsole(sentinel, { authorize, sessionTtl: 600, idleTtl: 601 })).toThrow(/console\.idleTtl.*600/);
    expect(() => createConsole(sentinel, { authorize, mountPath: 'ops/' })).toThrow(/console.mountPath/);
    expect(() => createConsole(sentinel, { authorize, mountPath: '/' })).toThrow(/console.mountPath/);
    // Every option is refused before the in-memory event log taps the service: a refused console leaves no listener.
    expect(eventTaps(sentinel.config)).toBeUndefined();
  });

  it('refuses a wrong eventBufferSize, events or keysAccountId with a ConfigurationError naming it, attaching nothing', () => {
    const sentinel = makeSentinel();
    const authorize = () => 'admin' as const;
    for (const [options, field] of [
      [{ eventBufferSize: 0 }, 'console.eventBufferSize'],
      [{ eventBufferSize: 2.5 }, 'console.eventBufferSize'],
      [{ eventBufferSize: '500' }, 'console.eventBufferSize'],
      [{ eventBufferSize: 100_001 }, 'console.eventBufferSize'],
      [{ events: {} }, 'console.events'],
      [{ events: { durable: true, query: 'events' } }, 'console.events'],
      [{ keysAccountId: 123456 }, 'console.keysAccountId'],
      [{ keysAccountId: '' }, 'console.keysAccountId'],
    ] as const) {
      expect(() => createConsole(sentinel, { authorize, ...(options as object) })).toThrow(
        expect.objectContaining({ name: 'ConfigurationError', message: expect.stringContaining(field) }),
      );
    }
    expect(eventTaps(sentinel.config)).toBeUndefined();
    expect(() => createConsole(sentinel, { authorize, eventBufferSize: 100_000, keysAccountId: ACCOUNT })).not.toThrow();
  });

  it('builds its callback from the issuer and mountPath, whatever prefix a request arrived under', async () => {
    const registered = async (issuer: string, mountPath: string | undefined, requestMount: string) => {
      const sentinel = makeSentinel({ issuer });
      const operatorConsole = createConsole(sentinel, { authorize: () => 'admin', ...(mountPath === undefined ? {} : { mountPath }) });
      const started = await operatorConsole.handle({
        ...consoleRequest('GET', '/console/sign-in'),
        query: new URLSearchParams({ account: ACCOUNT }),
        mountPath: requestMount,
      });
      const client = await contextOf(sentinel).apps.findApp(ACCOUNT, 'sentinel-console');
      return {
        redirectUris: client?.redirectUris,
        redirectUri: new URL(String(started?.headers.location)).searchParams.get('redirect_uri'),
        cookie: String(started?.headers['set-cookie']),
      };
    };
    // Beside the service: the issuer's path. Express hands over `/OPS` for its `/ops` mount; it changes nothing.
    const beside = await registered('http://localhost/ops', undefined, '/OPS');
    expect(beside.redirectUris).toEqual(['http://localhost/ops/console/callback']);
    expect(beside.redirectUri).toBe('http://localhost/ops/console/callback');
    expect(beside.cookie).toMatch(/Path=\/ops\/console;/);
    const elsewhere = await registered('http://localhost', '/admin', '/anything');
    expect(elsewhere.redirectUris).toEqual(['http://localhost/admin/console/callback']);
    expect(elsewhere.cookie).toMatch(/Path=\/admin\/console;/);
  });

  it('answers only its own path, and mounts under the service adapters with its path as basePath', async () => {
    const operatorConsole = createConsole(makeSentinel(), { authorize: () => 'admin', path: '/ops' });
    expect(operatorConsole.config.basePath).toBe('/ops');
    expect(await operatorConsole.handle(consoleRequest('GET', '/sentinel/api/account/x/authorize'))).toBeNull();
    expect(await operatorConsole.handle(consoleRequest('GET', '/opsx'))).toBeNull();
    expect((await operatorConsole.handle(consoleRequest('GET', '/ops/')))?.status).toBe(200);
  });

  it('sends a visitor without a session to sign in, and refuses a change without one', async () => {
    const sentinel = makeSentinel();
    const events: SentinelEvent[] = [];
    tapEvents(sentinel.config, (seen) => events.push(seen));
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const page = await operatorConsole.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`));
    expect(page?.status).toBe(303);
    expect(page?.headers.location).toBe(`/console/sign-in?account=${ACCOUNT}`);
    const change = await operatorConsole.handle(consoleRequest('POST', `/console/${ACCOUNT}/apps/${CLIENT_ID}/delete`, { form: {} }));
    expect(change?.status).toBe(403);
    expect(events.at(-1)).toMatchObject({ type: 'console.denied', reason: 'csrf', outcome: 'failure' });
    expect(await contextOf(sentinel).apps.findApp(ACCOUNT, CLIENT_ID)).not.toBeNull();
  });

  it("names the session's user in a refused sign-out, which no operator is signed in on, and keeps the session", async () => {
    const sentinel = makeSentinel();
    const events: SentinelEvent[] = [];
    tapEvents(sentinel.config, (seen) => events.push(seen));
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const forged = await operatorConsole.handle(consoleRequest('POST', '/console/sign-out', { cookie, form: { csrf: 'forged' } }));
    expect(forged?.status).toBe(403);
    expect(events.at(-1)).toMatchObject({
      type: 'console.denied',
      accountId: ACCOUNT,
      operator: 'u-op',
      action: 'sign-out',
      reason: 'csrf',
    });
    expect((await operatorConsole.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie })))?.status).toBe(200);
  });

  it('audits a refusal with no operator under the account it named, and none naming a made-up account', async () => {
    const sentinel = makeSentinel();
    const events: SentinelEvent[] = [];
    tapEvents(sentinel.config, (seen) => events.push(seen));
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const signIn = (account: string) =>
      operatorConsole.handle({ ...consoleRequest('GET', '/console/sign-in'), query: new URLSearchParams({ account }) });
    const forged = (account: string) =>
      operatorConsole.handle(consoleRequest('POST', `/console/${account}/apps/${CLIENT_ID}/delete`, { form: { csrf: 'x' } }));
    // Made up: answered as before, but no event, which nobody could read and anyone could send at the request rate.
    for (let index = 0; index < 3; index += 1) {
      expect((await signIn(`made-up-${index}`))?.status).toBe(404);
      expect((await forged(`made-up-${index}`))?.status).toBe(403);
    }
    expect(events.filter((seen) => seen.type === 'console.denied')).toEqual([]);
    // A real account's operators see the forged change aimed at it, in their own audit.
    expect((await forged(ACCOUNT))?.status).toBe(403);
    expect(events.filter((seen) => seen.type === 'console.denied')).toEqual([
      expect.objectContaining({ accountId: ACCOUNT, reason: 'csrf', target: CLIENT_ID, action: `POST apps/${CLIENT_ID}/delete` }),
    ]);
  });

  it('starts a sign-in only for an account the registry knows, with PKCE S256 and its own client', async () => {
    const sentinel = makeSentinel();
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const unknown = await operatorConsole.handle({
      ...consoleRequest('GET', '/console/sign-in'),
      query: new URLSearchParams({ account: 'nope' }),
    });
    expect(unknown?.status).toBe(404);
    expect(await contextOf(sentinel).apps.findApp('nope', 'sentinel-console')).toBeNull();
    const started = await operatorConsole.handle({
      ...consoleRequest('GET', '/console/sign-in'),
      query: new URLSearchParams({ account: ACCOUNT }),
    });
    expect(started?.status).toBe(303);
    const location = new URL(String(started?.headers.location));
    expect(location.pathname).toBe(`/sentinel/api/account/${ACCOUNT}/authorize`);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('client_id')).toBe('sentinel-console');
    expect(String(started?.headers['set-cookie'])).toMatch(/HttpOnly/i);
    const client = await contextOf(sentinel).apps.findApp(ACCOUNT, 'sentinel-console');
    expect(client?.tokenEndpointAuthMethod).toBe('none');
    expect(client?.redirectUris).toEqual(['http://localhost/console/callback']);
  });

  it('starts a sign-in to an account whose id is 256 characters, the longest an account id may be', async () => {
    const longAccount = `acct-${'9'.repeat(251)}`;
    expect(longAccount).toHaveLength(256);
    const sentinel = makeSentinel({
      apps: [
        {
          accountId: longAccount,
          clientId: 'app-of-a-long-account',
          tokenEndpointAuthMethod: 'none',
          redirectUris: ['https://app.example.com/cb'],
        },
      ],
    });
    const events: SentinelEvent[] = [];
    tapEvents(sentinel.config, (seen) => events.push(seen));
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const signIn = (account: string) =>
      operatorConsole.handle({ ...consoleRequest('GET', '/console/sign-in'), query: new URLSearchParams({ account }) });
    // A forged change aimed at it is in its audit, as for any account the registry knows.
    const forged = consoleRequest('POST', `/console/${longAccount}/apps/app-of-a-long-account/delete`, { form: { csrf: 'x' } });
    expect((await operatorConsole.handle(forged))?.status).toBe(403);
    expect(events.at(-1)).toMatchObject({ type: 'console.denied', accountId: longAccount, reason: 'csrf' });
    const started = await signIn(longAccount);
    expect(started?.status).toBe(303);
    expect(new URL(String(started?.headers.location)).pathname).toBe(`/sentinel/api/account/${longAccount}/authorize`);
    expect((await operatorConsole.handle(consoleRequest('GET', '/console/')))?.body).toContain('maxlength="256"');
    // What is no account id is refused as an unknown account, before the registry is asked.
    for (const account of [`${longAccount}9`, '..', 'a/b']) expect((await signIn(account))?.status).toBe(404);
  });

  it("shows the branding's logo: its origin is in the pages' img-src, as on the login page", async () => {
    const shown = async (logoUrl: string) => {
      const sentinel = makeSentinel({ branding: { productName: 'Acme ID', logoUrl } });
      const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
      const chooser = await operatorConsole.handle(consoleRequest('GET', '/console/'));
      const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
      const apps = await operatorConsole.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie }));
      return [chooser, apps].map((page) => ({
        img: String(page?.body).includes(`<img src="${logoUrl}"`),
        imgSrc: /(?:^|; )img-src ([^;]*)/.exec(String(page?.headers['content-security-policy']))?.[1],
      }));
    };
    for (const page of await shown('https://cdn.example.com/logo.svg')) {
      expect(page).toEqual({ img: true, imgSrc: 'https://cdn.example.com' });
    }
    for (const page of await shown('/static/logo.svg')) expect(page).toEqual({ img: true, imgSrc: "'self'" });
  });
});

describe('console: guards in front of every change', () => {
  it("answers a form too large to read with the form error's 413 and Connection: close, nothing changed", async () => {
    const sentinel = makeSentinel();
    const events: SentinelEvent[] = [];
    tapEvents(sentinel.config, (seen) => events.push(seen));
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const request = consoleRequest('POST', `/console/${ACCOUNT}/apps/${CLIENT_ID}/delete`, { cookie, form: {} });
    const answer = await operatorConsole.handle({ ...request, body: `csrf=x&pad=${'a'.repeat(sentinel.config.bodyLimit)}` });
    expect(answer?.status).toBe(413);
    expect(answer?.headers.connection).toBe('close');
    expect(answer?.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(events.at(-1)).toMatchObject({ type: 'console.denied', reason: 'invalid_input', operator: 'u-op' });
    expect(await contextOf(sentinel).apps.findApp(ACCOUNT, CLIENT_ID)).not.toBeNull();
  });

  it('answers a form that does not arrive within bodyTimeout with 408 and Connection: close, as the service does', async () => {
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ bodyTimeout: 0.05, onError: (error) => errors.push(error) });
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    // A lazy body that never comes, as an adapter hands over a body trickled one byte at a time.
    const stalled = () => new Promise<string>(() => undefined);
    for (const path of [`/console/${ACCOUNT}/apps/${CLIENT_ID}/delete`, '/console/sign-out']) {
      const answer = await Promise.race([
        operatorConsole.handle({ ...consoleRequest('POST', path, { cookie, form: {} }), body: stalled }),
        new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), 2000)),
      ]);
      expect(answer, path).not.toBe('held');
      expect(answer === 'held' ? undefined : answer?.status, path).toBe(408);
      expect(answer === 'held' ? undefined : answer?.headers.connection, path).toBe('close');
    }
    expect(errors).toEqual([]);
    expect(await contextOf(sentinel).apps.findApp(ACCOUNT, CLIENT_ID)).not.toBeNull();
  });

  it('refuses a method other than GET and POST with 405, signed in or not, before any refusal is audited', async () => {
    const sentinel = makeSentinel();
    const events: SentinelEvent[] = [];
    tapEvents(sentinel.config, (seen) => events.push(seen));
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    for (const method of ['PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      for (const path of ['/console/', '/console/sign-in', `/console/${ACCOUNT}/apps`, `/console/${ACCOUNT}/apps/${CLIENT_ID}/delete`]) {
        for (const signedIn of [false, true]) {
          const answer = await operatorConsole.handle(consoleRequest(method, path, { ...(signedIn ? { cookie } : {}), form: {} }));
          expect(answer?.status, `${method} ${path}`).toBe(405);
          expect(answer?.headers.allow, `${method} ${path}`).toBe('GET, POST');
          expect(answer?.headers['content-security-policy']).toContain("frame-ancestors 'none'");
        }
      }
    }
    expect(events.filter((seen) => seen.type === 'console.denied')).toEqual([]);
    expect(await contextOf(sentinel).apps.findApp(ACCOUNT, CLIENT_ID)).not.toBeNull();
  });

  async function signedIn(role: 'admin' | 'viewer' | 'throws', onError?: (error: unknown) => void) {
    const sentinel = makeSentinel(onError === undefined ? {} : { onError });
    const events: SentinelEvent[] = [];
    tapEvents(sentinel.config, (seen) => events.push(seen));
    const operatorConsole = createConsole(sentinel, {
      authorize: () => {
        if (role === 'throws') throw new Error('directory down');
        return role;
      },
    });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const page = await operatorConsole.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie }));
    const csrf = /name="csrf" value="([^"]+)"/.exec(page?.body ?? '')?.[1] ?? '';
    return { sentinel, events, operatorConsole, cookie, csrf, page };
  }

  it('refuses a forged CSRF token, a viewer, and another account; nothing changes and each is audited', async () => {
    const admin = await signedIn('admin');
    expect(admin.csrf).not.toBe('');
    const forged = await admin.operatorConsole.handle(
      consoleRequest('POST', `/console/${ACCOUNT}/apps/${CLIENT_ID}/disable`, { cookie: admin.cookie, form: { csrf: `${admin.csrf}x` } }),
    );
    expect(forged?.status).toBe(403);
    expect(forged?.body).toContain('did not come from this console');
    expect(admin.events.at(-1)).toMatchObject({ type: 'console.denied', reason: 'csrf', operator: 'u-op' });
    const other = await admin.operatorConsole.handle(
      consoleRequest('POST', `/console/${OTHER_ACCOUNT}/apps/x/disable`, { cookie: admin.cookie, form: { csrf: admin.csrf } }),
    );
    expect(other?.status).toBe(403);
    expect(admin.events.at(-1)).toMatchObject({ type: 'console.denied', reason: 'account' });
    expect(await contextOf(admin.sentinel).apps.findApp(ACCOUNT, CLIENT_ID)).not.toBeNull();

    const viewer = await signedIn('viewer');
    const refused = await viewer.operatorConsole.handle(
      consoleRequest('POST', `/console/${ACCOUNT}/apps/${CLIENT_ID}/disable`, { cookie: viewer.cookie, form: { csrf: viewer.csrf } }),
    );
    expect(refused?.status).toBe(403);
    expect(viewer.events.at(-1)).toMatchObject({ type: 'console.denied', reason: 'viewer', operator: 'u-op' });
    expect(await contextOf(viewer.sentinel).apps.findApp(ACCOUNT, CLIENT_ID)).not.toBeNull();

    const done = await admin.operatorConsole.handle(
      consoleRequest('POST', `/console/${ACCOUNT}/apps/${CLIENT_ID}/disable`, { cookie: admin.cookie, form: { csrf: admin.csrf } }),
    );
    expect(done?.status).toBe(303);
    expect(await contextOf(admin.sentinel).apps.findApp(ACCOUNT, CLIENT_ID)).toBeNull();
    expect(admin.events.at(-1)).toMatchObject({ type: 'console.changed', action: 'app.disable', operator: 'u-op', target: CLIENT_ID });
  });

  it('fails closed when authorize throws: 500, onError told, nothing changed', async () => {
    const errors: unknown[] = [];
    const broken = await signedIn('throws', (error) => errors.push(error));
    expect(broken.page?.status).toBe(500);
    expect(broken.page?.body).not.toContain('directory down');
    expect(errors).toHaveLength(1);
  });
});

describe('console: stored records', () => {
  it('keeps operator sessions through a flood of anonymous sign-ins on a MemoryStore with a small LRU', async () => {
    // One LRU per key prefix: the pending sign-ins anyone can start must not share the sessions' one.
    const sentinel = makeSentinel({ store: new MemoryStore({ max: 20 }) });
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    expect((await operatorConsole.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie })))?.status).toBe(200);
    for (let index = 0; index < 50; index++) {
      const started = await operatorConsole.handle({
        ...consoleRequest('GET', '/console/sign-in'),
        query: new URLSearchParams({ account: ACCOUNT }),
      });
      expect(started?.status).toBe(303);
    }
    const after = await operatorConsole.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie }));
    expect(after?.status).toBe(200);
  });
});

describe('console: the sessions page takes every user id a sign-in takes', () => {
  it("finds and ends the sessions of a user whose id is 256 characters, the sign-in's longest", async () => {
    const sentinel = makeSentinel();
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const user = `cn=${'x'.repeat(249)},o=a`;
    expect(user).toHaveLength(256);
    // A device session of that user (and a console session of theirs, unused here).
    await operatorCookie(sentinel, ACCOUNT, user, 600);
    const found = await operatorConsole.handle({
      ...consoleRequest('GET', `/console/${ACCOUNT}/sessions`, { cookie }),
      query: new URLSearchParams({ user }),
    });
    expect(found?.status).toBe(200);
    expect(found?.body).toContain('maxlength="256"');
    const csrf = /name="csrf" value="([^"]+)"/.exec(found?.body ?? '')?.[1] ?? '';
    expect(found?.body).toContain('sessions/end-all');
    const ended = await operatorConsole.handle(
      consoleRequest('POST', `/console/${ACCOUNT}/sessions/end-all`, { cookie, form: { csrf, user } }),
    );
    expect(ended?.status).toBe(303);
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: user })).toEqual([]);
    const tooLong = await operatorConsole.handle({
      ...consoleRequest('GET', `/console/${ACCOUNT}/sessions`, { cookie }),
      query: new URLSearchParams({ user: `${user}x` }),
    });
    expect(tooLong?.status).toBe(400);
  });
});

describe('console: a failing onEvent after a change', () => {
  it('shows the rotated secret and the deletion, with onError told, because both are already saved', async () => {
    const errors: unknown[] = [];
    let failing = false;
    const sentinel = makeSentinel({
      onEvent: (seen) => {
        if (failing) throw new Error(`audit sink down (${seen.type})`);
      },
      onError: (error) => errors.push(error),
    });
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const page = await operatorConsole.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps/${CLIENT_ID}`, { cookie }));
    const csrf = /name="csrf" value="([^"]+)"/.exec(page?.body ?? '')?.[1] ?? '';
    const once = /name="once" value="([^"]+)"/.exec(page?.body ?? '')?.[1] ?? '';
    failing = true;
    const rotated = await operatorConsole.handle(
      consoleRequest('POST', `/console/${ACCOUNT}/apps/${CLIENT_ID}/rotate-secret`, { cookie, form: { csrf, once, overlap: '0' } }),
    );
    expect(rotated?.status).toBe(200);
    const secret = /<p class="secret">([^<]+)<\/p>/.exec(rotated?.body ?? '')?.[1] ?? '';
    expect(verifyClientSecret(secret, (await contextOf(sentinel).apps.findApp(ACCOUNT, CLIENT_ID))?.clientSecretHash)).toBe(true);
    const deleted = await operatorConsole.handle(
      consoleRequest('POST', `/console/${ACCOUNT}/apps/${CLIENT_ID}/delete`, { cookie, form: { csrf } }),
    );
    expect(deleted?.status).toBe(303);
    expect(await contextOf(sentinel).apps.findApp(ACCOUNT, CLIENT_ID)).toBeNull();
    expect(errors.map(String)).toEqual([
      'Error: audit sink down (app.secret_rotated)',
      'Error: audit sink down (console.changed)',
      'Error: audit sink down (app.deleted)',
      'Error: audit sink down (console.changed)',
    ]);
  });
});

describe('console: the in-memory event buffer', () => {
  it('keeps the newest events up to its size, newest first, paged by cursor and filtered', () => {
    const log = new MemoryEventLog(5);
    for (let at = 1; at <= 8; at += 1) log.record(event(at, at % 2 === 0 ? { clientId: 'even' } : {}));
    const first = log.query({ accountId: ACCOUNT, limit: 2 });
    expect(first.events.map((seen) => seen.at)).toEqual([8, 7]);
    const second = log.query({ accountId: ACCOUNT, limit: 2, cursor: first.next });
    expect(second.events.map((seen) => seen.at)).toEqual([6, 5]);
    const last = log.query({ accountId: ACCOUNT, limit: 2, cursor: second.next });
    expect(last.events.map((seen) => seen.at)).toEqual([4]);
    expect(last.next).toBeUndefined();
    expect(log.query({ accountId: ACCOUNT, limit: 10, clientId: 'even' }).events.map((seen) => seen.at)).toEqual([8, 6, 4]);
    expect(log.query({ accountId: ACCOUNT, limit: 10, since: 6, until: 8 }).events.map((seen) => seen.at)).toEqual([7, 6]);
    expect(log.query({ accountId: OTHER_ACCOUNT, limit: 10 }).events).toEqual([]);
    expect(() => new MemoryEventLog(0)).toThrow(RangeError);
  });

  it('caps a page at 200 events whatever the limit, a whole number of them, and pages on', () => {
    const log = new MemoryEventLog(1000);
    for (let at = 1; at <= 500; at += 1) log.record(event(at));
    for (const [limit, size] of [
      [Number.NaN, 200],
      [Number.POSITIVE_INFINITY, 200],
      [500, 200],
      [2.5, 2],
      [0.5, 1],
      [Number.NEGATIVE_INFINITY, 1],
    ]) {
      const page = log.query({ accountId: ACCOUNT, limit: limit as number });
      expect(page.events, `limit ${limit}`).toHaveLength(size as number);
      expect(page.next, `limit ${limit}`).toBeDefined();
    }
    const first = log.query({ accountId: ACCOUNT, limit: Number.NaN });
    const second = log.query({ accountId: ACCOUNT, limit: Number.NaN, cursor: first.next });
    expect(second.events[0]?.at).toBe(300);
  });

  it('a throwing tap never fails the service', async () => {
    const sentinel = makeSentinel();
    const untap = tapEvents(sentinel.config, () => {
      throw new Error('tap failure');
    });
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const refused = await operatorConsole.handle(consoleRequest('POST', `/console/${ACCOUNT}/apps/x/delete`, { form: {} }));
    expect(refused?.status).toBe(403);
    untap();
  });
});

describe('console: a registry larger than the list shows', () => {
  it('finds, by search and by address, an app past the 10 000 the list browses', async () => {
    const sentinel = makeSentinel();
    const apps = contextOf(sentinel).apps;
    const listed = apps.listApps?.bind(apps);
    const fillers = Array.from({ length: 10_000 }, (_, index) => ({
      clientId: `filler-${index}`,
      name: `Filler ${index}`,
      accountId: ACCOUNT,
      redirectUris: [],
      grantTypes: ['client_credentials'],
      tokenEndpointAuthMethod: 'client_secret_basic',
    }));
    apps.listApps = async (accountId: string) => [...(fillers as never[]), ...((await listed?.(accountId)) ?? [])];
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const found = await operatorConsole.handle({
      ...consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie }),
      query: new URLSearchParams({ q: CLIENT_ID }),
    });
    expect(found?.status).toBe(200);
    expect(String(found?.body)).toContain(`<code>${CLIENT_ID}</code>`);
    const page = await operatorConsole.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps/${CLIENT_ID}`, { cookie }));
    expect(page?.status).toBe(200);
  });
});

describe('MemoryAppStore: disable and enable', () => {
  it('a disabled app is unknown to findApp, listed as disabled, patchable, and enabled again with its secret', () => {
    const store = new MemoryAppStore();
    store.saveApp({
      accountId: ACCOUNT,
      clientId: 'c',
      redirectUris: [],
      grantTypes: ['client_credentials'],
      tokenEndpointAuthMethod: 'client_secret_basic',
      clientSecretHash: 'sha256:x',
    });
    expect(store.disableApp(ACCOUNT, 'c')).toBe(true);
    expect(store.findApp(ACCOUNT, 'c')).toBeNull();
    expect(store.listApps(ACCOUNT)[0]?.disabled).toBe(true);
    expect(store.patchApp(ACCOUNT, 'c', (current) => ({ name: current.disabled === true ? 'was disabled' : 'no' }))?.name).toBe(
      'was disabled',
    );
    expect(store.enableApp(ACCOUNT, 'c')).toBe(true);
    expect(store.findApp(ACCOUNT, 'c')?.clientSecretHash).toBe('sha256:x');
    expect(store.findApp(ACCOUNT, 'c')?.disabled).toBeUndefined();
    expect(store.disableApp(ACCOUNT, 'nope')).toBe(false);
  });
});

describe("console: the audit page's time filter", () => {
  it('includes the whole minute "To" names, and no more', async () => {
    const sentinel = makeSentinel();
    const log = new MemoryEventLog();
    const minute = Date.parse('2026-11-30T14:30:00Z');
    const times: [string, number][] = [
      ['u-before', minute - 1],
      ['u-start', minute],
      ['u-during', minute + 20_000],
      ['u-last', minute + 59_999],
      ['u-after', minute + 60_000],
    ];
    for (const [userId, at] of times) log.record(event(at, { userId }));
    const operatorConsole = createConsole(sentinel, { authorize: () => 'viewer', events: log });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const shown = async (query: Record<string, string>): Promise<string[]> => {
      const page = await operatorConsole.handle({
        ...consoleRequest('GET', `/console/${ACCOUNT}/audit`, { cookie }),
        query: new URLSearchParams(query),
      });
      expect(page?.status, JSON.stringify(query)).toBe(200);
      return times.map(([userId]) => userId).filter((userId) => String(page?.body).includes(`userId=${userId}`));
    };
    expect(await shown({ to: '2026-11-30T14:30' })).toEqual(['u-before', 'u-start', 'u-during', 'u-last']);
    expect(await shown({ from: '2026-11-30T14:30', to: '2026-11-30T14:30' })).toEqual(['u-start', 'u-during', 'u-last']);
    // A value with seconds ends after its second, one with a fraction at its millisecond.
    expect(await shown({ from: '2026-11-30T14:30', to: '2026-11-30T14:30:20' })).toEqual(['u-start', 'u-during']);
    expect(await shown({ to: '2026-11-30T14:30:00.000' })).toEqual(['u-before', 'u-start']);
    expect(await shown({ to: '2026-11-30T14:29' })).toEqual(['u-before']);
  });
});
