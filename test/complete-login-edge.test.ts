/**
 * `sentinel.completeLogin()` runs at the same edge as the routes: a failure inside it takes the login route's
 * path (same renderer, same 500, `onError` called), and its audit events are built by the same helper.
 */
import { describe, expect, it } from 'vitest';
import type { SentinelEvent, SentinelResponse } from '../src/index.js';
import { ACCOUNT_PATH, call, openLogin, postLogin, startInteraction } from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, makeSentinel, OTHER_ACCOUNT, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';

/** A response with its per-response nonces blanked, so two renderings of one page compare equal. */
function comparable(response: SentinelResponse): { status: number; headers: Record<string, unknown>; body: unknown } {
  const blank = (text: string): string => text.replace(/nonce-[A-Za-z0-9+/_=-]+/g, 'nonce-*').replace(/nonce="[^"]+"/g, 'nonce="*"');
  const headers = Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, blank(String(value))]));
  return { status: response.status, headers, body: typeof response.body === 'string' ? blank(response.body) : response.body };
}

/** A service whose `onEvent` records every event and throws on `session.created`, with `onError` recorded. */
function failingOnSessionCreated() {
  const events: SentinelEvent[] = [];
  const reports: { error: unknown; route: string }[] = [];
  const sentinel = makeSentinel({
    onEvent: (event) => {
      events.push(event);
      if (event.type === 'session.created') throw new Error('audit sink down');
    },
    onError: (error, context) => {
      reports.push({ error, route: context.route });
    },
  });
  return { sentinel, events, reports };
}

describe('completeLogin() at the edge', () => {
  it('answers a failing hook with the login route’s 500 page and reports it to onError', async () => {
    const { sentinel, events, reports } = failingOnSessionCreated();

    const viaRoute = await startInteraction(sentinel);
    const csrf = await openLogin(sentinel, viaRoute.interaction);
    const routeAnswer = await postLogin(sentinel, viaRoute.interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
    const viaHost = await startInteraction(sentinel);
    // The same method as the form's, so both sign-ins reach the same level and their events the same fields.
    const hostAnswer = await sentinel.completeLogin(viaHost.interaction, { userId: USER_ID, amr: ['pwd'] });

    expect(routeAnswer.status).toBe(500);
    expect(String(routeAnswer.headers['content-type'])).toContain('text/html');
    expect(comparable(hostAnswer)).toEqual(comparable(routeAnswer));
    expect(reports.map((report) => report.route)).toEqual(['login', 'complete-login']);
    for (const report of reports) expect((report.error as Error).message).toBe('audit sink down');

    // The same event, built by the same helper: same fields, same values but the address (completeLogin has no request).
    const created = events.filter((event) => event.type === 'session.created');
    expect(created).toHaveLength(2);
    const [fromRoute, fromHost] = created as [SentinelEvent, SentinelEvent];
    expect(Object.keys(fromHost).sort()).toEqual(Object.keys(fromRoute).sort());
    expect(fromRoute).toMatchObject({ accountId: ACCOUNT, clientId: CLIENT_ID, userId: USER_ID, outcome: 'success', ip: '203.0.113.7' });
    expect(fromHost).toMatchObject({ accountId: ACCOUNT, clientId: CLIENT_ID, userId: USER_ID, outcome: 'success', ip: undefined });
  });

  it('renders a refusal (an unknown interaction) as the login route does, without calling onError', async () => {
    const reports: string[] = [];
    const sentinel = makeSentinel({ onError: (_error, context) => reports.push(context.route) });
    const { interaction } = await startInteraction(sentinel);
    const spent = await sentinel.completeLogin(interaction, { userId: USER_ID });
    expect(spent.status).toBe(303);

    const hostAnswer = await sentinel.completeLogin(interaction, { userId: USER_ID });
    const routeAnswer = await postLogin(sentinel, interaction, { csrf_token: 'x', username: USERNAME, password: PASSWORD });
    expect(hostAnswer.status).toBe(400);
    expect(comparable(hostAnswer)).toEqual(comparable(routeAnswer));
    expect(reports).toEqual([]);
  });

  it('reports a host mistake (no user id) as a server error of complete-login', async () => {
    const reports: string[] = [];
    const sentinel = makeSentinel({ onError: (_error, context) => reports.push(context.route) });
    const { interaction } = await startInteraction(sentinel);
    const answer = await sentinel.completeLogin(interaction, { userId: '' });
    expect(answer.status).toBe(500);
    expect(reports).toEqual(['complete-login']);
  });

  it('refuses an authTime that is not whole seconds up to now, before anything is stored', async () => {
    const reports: string[] = [];
    const sentinel = makeSentinel({ onError: (_error, context) => reports.push(context.route) });
    const now = Math.floor(Date.now() / 1000);
    for (const authTime of ['1732900000', Number.NaN, Number.POSITIVE_INFINITY, now + 0.5, Date.now(), now + 3600]) {
      const { interaction } = await startInteraction(sentinel);
      const answer = await sentinel.completeLogin(interaction, { userId: USER_ID, authTime: authTime as number });
      expect(answer.status, String(authTime)).toBe(500);
    }
    expect(reports).toHaveLength(6);
    // Nothing was stored: the user's index reads, and a good completion signs in.
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
    const { interaction } = await startInteraction(sentinel);
    expect((await sentinel.completeLogin(interaction, { userId: USER_ID, authTime: now - 5 })).status).toBe(303);
  });

  it('with accountId, completes only a sign-in of that account', async () => {
    const sentinel = makeSentinel();
    const { interaction } = await startInteraction(sentinel);
    const other = await sentinel.completeLogin(interaction, { userId: USER_ID, accountId: OTHER_ACCOUNT });
    expect(other.status).toBe(400);
    expect(other.headers['set-cookie']).toBeUndefined();
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
    const next = await startInteraction(sentinel);
    expect((await sentinel.completeLogin(next.interaction, { userId: USER_ID, accountId: ACCOUNT })).status).toBe(303);
  });

  it('closes the built-in login page and its steps while the host signs users in (login.url)', async () => {
    const sentinel = makeSentinel({ login: { url: '/host/login' } });
    const { interaction } = await startInteraction(sentinel);
    const query = new URLSearchParams({ interaction });
    for (const path of ['login', 'login/totp', 'login/passkey/register']) {
      const page = await call(sentinel, { path: `${ACCOUNT_PATH}/${path}`, query });
      expect(page.status, path).toBe(404);
    }
    const posted = await postLogin(sentinel, interaction, { csrf_token: 'x', username: USERNAME, password: PASSWORD });
    expect(posted.status).toBe(404);
    // The interaction is the host's to finish.
    expect((await sentinel.completeLogin(interaction, { userId: USER_ID })).status).toBe(303);
  });
});
