/**
 * The console's audit events: a throwing `onEvent` on `console.denied` answers the console's own 500 page (its
 * cause to `onError`), every refusal emits `console.denied` naming its target, and the registry's own events for
 * the console's app changes and for the console client a sign-in registers.
 */
import { describe, expect, it, vi } from 'vitest';
import { createConsole } from '../src/console/index.js';
import { contextOf } from '../src/http/context.js';
import type { SentinelEvent, SentinelRequest, SentinelResponse } from '../src/index.js';
import { consoleRequest, operatorCookie } from './helpers/console-session.js';
import { ACCOUNT, CLIENT_ID, makeSentinel } from './helpers/fixtures.js';

/** A console over a service whose `onEvent` records, and throws on the types in `vetoed`. */
function harness(vetoed: readonly string[] = []) {
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  const sentinel = makeSentinel({
    onEvent: (event) => {
      events.push(event);
      if (vetoed.includes(event.type)) throw new Error(`audit sink down (${event.type})`);
    },
    onError: (error) => {
      errors.push(error);
    },
  });
  const roles: { current: 'admin' | 'viewer' | null } = { current: 'admin' };
  const operatorConsole = createConsole(sentinel, { authorize: () => roles.current });
  const handle = async (input: SentinelRequest) => (await operatorConsole.handle(input)) as SentinelResponse;
  return { sentinel, events, errors, roles, handle };
}

describe('console: a throwing onEvent on console.denied', () => {
  it("answers the console's 500 page with its headers, and onError hears the hook", async () => {
    const h = harness(['console.denied']);
    const response = await h.handle(consoleRequest('POST', `/console/${ACCOUNT}/apps`, { form: { csrf: 'x' } }));
    expect(response.status).toBe(500);
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(response.body).not.toContain('audit sink down');
    expect(h.errors.map(String)).toEqual(['Error: audit sink down (console.denied)']);
  });
});

describe('console: each refusal emits console.denied naming its target', () => {
  const denied = (events: SentinelEvent[]) => events.filter((event) => event.type === 'console.denied');

  it('an operator whose role was withdrawn: 403 and not_operator, for a page and for a change', async () => {
    const h = harness();
    const cookie = await operatorCookie(h.sentinel, ACCOUNT, 'u-op', 600);
    const page = await h.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie }));
    const csrf = /name="csrf" value="([^"]+)"/.exec(String(page.body))?.[1] as string;
    h.roles.current = null;
    const before = h.events.length;
    expect((await h.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie }))).status).toBe(403);
    const change = await h.handle(consoleRequest('POST', `/console/${ACCOUNT}/apps/${CLIENT_ID}/delete`, { cookie, form: { csrf } }));
    expect(change.status).toBe(403);
    expect(denied(h.events.slice(before))).toMatchObject([
      { accountId: ACCOUNT, operator: 'u-op', action: 'GET apps', reason: 'not_operator', outcome: 'failure' },
      { accountId: ACCOUNT, operator: 'u-op', action: `POST apps/${CLIENT_ID}/delete`, reason: 'not_operator', target: CLIENT_ID },
    ]);
  });

  it('names the client id, kid or user a refused change aimed at', async () => {
    const h = harness();
    const admin = await operatorCookie(h.sentinel, ACCOUNT, 'u-op', 600);
    const page = await h.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie: admin }));
    const csrf = /name="csrf" value="([^"]+)"/.exec(String(page.body))?.[1] as string;
    await h.handle(consoleRequest('POST', `/console/${ACCOUNT}/apps/nope/delete`, { cookie: admin, form: { csrf } }));
    await h.handle(consoleRequest('POST', `/console/${ACCOUNT}/apps/${CLIENT_ID}/disable`, { form: { csrf: 'x' } }));
    await h.handle(consoleRequest('POST', `/console/${ACCOUNT}/keys/kid-1/revoke`, { cookie: admin, form: { csrf: 'forged' } }));
    await h.handle(
      consoleRequest('POST', `/console/${ACCOUNT}/sessions/end-all`, { cookie: admin, form: { csrf: 'forged', user: 'u-carol' } }),
    );
    h.roles.current = 'viewer';
    await h.handle(consoleRequest('POST', `/console/${ACCOUNT}/sessions/end-all`, { cookie: admin, form: { csrf, user: 'u-bob' } }));
    expect(denied(h.events).map((event) => event.type === 'console.denied' && [event.reason, event.target])).toEqual([
      ['unknown_app', 'nope'],
      ['csrf', CLIENT_ID],
      ['csrf', 'kid-1'],
      ['csrf', 'u-carol'],
      ['viewer', 'u-bob'],
    ]);
  });

  it("cuts the action of an anonymous refusal as it cuts the target: a caller's path names no kilobytes", async () => {
    const h = harness();
    const long = 'x'.repeat(8000);
    for (const path of [`apps/${long}/delete`, `${long}/more`, `sessions/${long}`]) {
      expect((await h.handle(consoleRequest('POST', `/console/${ACCOUNT}/${path}`, { form: { csrf: 'forged' } }))).status).toBe(403);
    }
    const events = denied(h.events);
    expect(events).toHaveLength(3);
    for (const event of events) {
      if (event.type !== 'console.denied') continue;
      expect(event.action.length).toBeLessThanOrEqual(205);
      expect((event.target ?? '').length).toBeLessThanOrEqual(200);
    }
    expect(events.map((event) => event.type === 'console.denied' && event.action.slice(0, 12))).toEqual([
      'POST apps/xx',
      'POST xxxxxxx',
      'POST session',
    ]);
  });

  it("cuts the target of a signed-in admin's refused change as well", async () => {
    const h = harness();
    const cookie = await operatorCookie(h.sentinel, ACCOUNT, 'u-op', 600);
    const page = await h.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie }));
    const csrf = /name="csrf" value="([^"]+)"/.exec(String(page.body))?.[1] as string;
    const long = 'x'.repeat(8000);
    const refused = await h.handle(consoleRequest('POST', `/console/${ACCOUNT}/apps/${long}/delete/again`, { cookie, form: { csrf } }));
    expect(refused.status).toBe(404);
    const [event] = denied(h.events);
    expect(event).toMatchObject({ reason: 'unknown_app', operator: 'u-op' });
    expect(event?.type === 'console.denied' && (event.target ?? '').length).toBe(200);
  });
});

describe("console: the registry's own events", () => {
  it('disabling and enabling an app emit app.updated with the operator as actor, besides console.changed', async () => {
    const h = harness(['app.updated']);
    const cookie = await operatorCookie(h.sentinel, ACCOUNT, 'u-op', 600);
    const page = await h.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie }));
    const csrf = /name="csrf" value="([^"]+)"/.exec(String(page.body))?.[1] as string;
    const before = h.events.length;
    for (const action of ['disable', 'enable']) {
      expect(
        (await h.handle(consoleRequest('POST', `/console/${ACCOUNT}/apps/${CLIENT_ID}/${action}`, { cookie, form: { csrf } }))).status,
      ).toBe(303);
    }
    expect(h.events.slice(before)).toMatchObject([
      { type: 'app.updated', accountId: ACCOUNT, clientId: CLIENT_ID, actor: 'console:u-op', changed: ['disabled'] },
      { type: 'console.changed', action: 'app.disable', target: CLIENT_ID },
      { type: 'app.updated', accountId: ACCOUNT, clientId: CLIENT_ID, actor: 'console:u-op', changed: ['disabled'] },
      { type: 'console.changed', action: 'app.enable', target: CLIENT_ID },
    ]);
    // Committed: the throwing hook vetoed neither change.
    expect(h.errors.map(String)).toEqual(Array(2).fill('Error: audit sink down (app.updated)'));
  });

  it('registering an app records the operator as the actor, in app.registered and in the registry change', async () => {
    const h = harness();
    const cookie = await operatorCookie(h.sentinel, ACCOUNT, 'u-op', 600);
    const page = await h.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie }));
    const csrf = /name="csrf" value="([^"]+)"/.exec(String(page.body))?.[1] as string;
    const once = /name="once" value="([^"]+)"/.exec(String(page.body))?.[1] as string;
    const saveApp = vi.spyOn(contextOf(h.sentinel).apps, 'saveApp');
    const before = h.events.length;
    const form = { csrf, once, name: 'Reports', redirect_uris: 'https://reports.example.com/cb', auth: 'client_secret_basic' };
    expect((await h.handle(consoleRequest('POST', `/console/${ACCOUNT}/apps`, { cookie, form }))).status).toBe(200);
    const registered = h.events.slice(before).find((event) => event.type === 'app.registered');
    expect(registered).toMatchObject({ accountId: ACCOUNT, actor: 'console:u-op' });
    expect(saveApp).toHaveBeenCalledTimes(1);
    expect(saveApp.mock.calls[0]?.[1]).toEqual({ actor: 'console:u-op' });
  });

  it('a sign-in registers the console client with app.registered, and corrects its callback with app.updated', async () => {
    const h = harness(['app.registered', 'app.updated']);
    const start = () => h.handle({ ...consoleRequest('GET', '/console/sign-in'), query: new URLSearchParams({ account: ACCOUNT }) });
    expect((await start()).status).toBe(303);
    expect((await start()).status).toBe(303);
    const apps = contextOf(h.sentinel).apps;
    const client = await apps.findApp(ACCOUNT, 'sentinel-console');
    expect(client).not.toBeNull();
    // The configured callback moved: the next sign-in rewrites the client's redirect URI.
    await apps.saveApp?.({ ...(client as NonNullable<typeof client>), redirectUris: ['http://localhost/old/callback'] }, { actor: 'test' });
    expect((await start()).status).toBe(303);
    const registry = h.events.filter((event) => event.type.startsWith('app.'));
    expect(registry).toMatchObject([
      { type: 'app.registered', accountId: ACCOUNT, clientId: 'sentinel-console', actor: 'console' },
      { type: 'app.updated', accountId: ACCOUNT, clientId: 'sentinel-console', actor: 'console', changed: ['redirectUris'] },
    ]);
    // Committed: the client is saved whatever the hook says, and the sign-in goes on.
    expect(h.errors.map(String)).toEqual(['Error: audit sink down (app.registered)', 'Error: audit sink down (app.updated)']);
  });

  it('refuses a sign-in while the console client is disabled, and neither saves it again nor says it was registered', async () => {
    const h = harness();
    const start = () => h.handle({ ...consoleRequest('GET', '/console/sign-in'), query: new URLSearchParams({ account: ACCOUNT }) });
    expect((await start()).status).toBe(303);
    const apps = contextOf(h.sentinel).apps;
    expect(await apps.disableApp?.(ACCOUNT, 'sentinel-console', { actor: 'test' })).toBe(true);
    const saveApp = vi.spyOn(apps, 'saveApp');
    const before = h.events.length;
    const refused = await h.handle({ ...consoleRequest('GET', '/console/sign-in'), query: new URLSearchParams({ account: ACCOUNT }) });
    expect(refused.status).toBe(403);
    expect(refused.headers['set-cookie']).toBeUndefined();
    expect(String(refused.body)).toContain('sentinel-console');
    expect(saveApp).not.toHaveBeenCalled();
    expect(h.events.slice(before)).toMatchObject([
      { type: 'console.denied', action: 'sign-in', reason: 'console_disabled', target: ACCOUNT },
    ]);
    const listed = (await apps.listApps?.(ACCOUNT))?.find((app) => app.clientId === 'sentinel-console');
    expect(listed?.disabled).toBe(true);
  });

  it('turns off the sessions signed in before the console client was disabled: ended, each request refused', async () => {
    const h = harness();
    expect(
      (await h.handle({ ...consoleRequest('GET', '/console/sign-in'), query: new URLSearchParams({ account: ACCOUNT }) })).status,
    ).toBe(303);
    const cookie = await operatorCookie(h.sentinel, ACCOUNT, 'u-op', 600);
    const page = await h.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie }));
    expect(page.status).toBe(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(String(page.body))?.[1] as string;
    const apps = contextOf(h.sentinel).apps;
    // Whoever runs the service turns the console off for the account (sentinel-idp apps disable … sentinel-console).
    expect(await apps.disableApp?.(ACCOUNT, 'sentinel-console', { actor: 'cli' })).toBe(true);
    const before = h.events.length;
    const change = await h.handle(consoleRequest('POST', `/console/${ACCOUNT}/apps/${CLIENT_ID}/delete`, { cookie, form: { csrf } }));
    expect(change.status).toBe(403);
    expect(String(change.body)).toContain('sentinel-console');
    expect(await apps.findApp(ACCOUNT, CLIENT_ID)).not.toBeNull();
    expect(h.events.slice(before)).toMatchObject([
      { type: 'console.denied', accountId: ACCOUNT, operator: 'u-op', action: `POST apps/${CLIENT_ID}/delete`, reason: 'console_disabled' },
    ]);
    // Ended, not kept for when the console is on again: the operator signs in anew then.
    expect(await apps.enableApp?.(ACCOUNT, 'sentinel-console', { actor: 'cli' })).toBe(true);
    const after = await h.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie }));
    expect(after.status).toBe(303);
    expect(after.headers.location).toBe(`/console/sign-in?account=${ACCOUNT}`);
  });
});
