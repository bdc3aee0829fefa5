/**
 * The console's two changes answered with a secret's page (register, rotate the secret) run once per form: a reload
 * of that page sends the same POST again, which is refused with nothing changed, so no second app appears and the
 * secret just shown is not rotated away. A form refused before its change ran can be sent again once fixed.
 */
import { describe, expect, it } from 'vitest';
import { verifyClientSecret } from '../src/apps/client-secrets.js';
import { createConsole } from '../src/console/index.js';
import { contextOf } from '../src/http/context.js';
import type { SentinelEvent, SentinelRequest, SentinelResponse } from '../src/index.js';
import { consoleRequest, operatorCookie } from './helpers/console-session.js';
import { ACCOUNT, CLIENT_ID, makeSentinel } from './helpers/fixtures.js';

async function harness() {
  const events: SentinelEvent[] = [];
  const sentinel = makeSentinel({ onEvent: (event) => events.push(event) });
  const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
  const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
  const handle = async (input: SentinelRequest) => (await operatorConsole.handle(input)) as SentinelResponse;
  /** The CSRF token and the `once` of the form on the page at `path`. */
  const formOf = async (path: string) => {
    const body = String((await handle(consoleRequest('GET', path, { cookie }))).body);
    return {
      csrf: /name="csrf" value="([^"]+)"/.exec(body)?.[1] as string,
      once: /name="once" value="([^"]+)"/.exec(body)?.[1] as string,
    };
  };
  const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) => {
    const request = consoleRequest('POST', path, { cookie, form });
    return handle({ ...request, headers: { ...request.headers, ...headers } });
  };
  const appCount = async () => ((await contextOf(sentinel).apps.listApps?.(ACCOUNT)) ?? []).length;
  return { sentinel, events, formOf, post, appCount };
}

const secretOf = (response: SentinelResponse): string => /<p class="secret">([^<]+)<\/p>/.exec(String(response.body))?.[1] ?? '';

describe('console: a form answered with a secret runs once', () => {
  it('refuses the registration form sent a second time: one app, and the page says why', async () => {
    const h = await harness();
    const { csrf, once } = await h.formOf(`/console/${ACCOUNT}/apps`);
    expect(once).toMatch(/^[\w-]{16,}$/);
    const form = { csrf, once, name: 'Reports', redirect_uris: 'https://reports.example.com/cb', auth: 'client_secret_basic' };
    const before = await h.appCount();
    const first = await h.post(`/console/${ACCOUNT}/apps`, form);
    expect(first.status).toBe(200);
    expect(secretOf(first)).not.toBe('');
    const again = await h.post(`/console/${ACCOUNT}/apps`, form, { 'accept-language': 'fr' });
    expect(again.status).toBe(409);
    expect(again.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(String(again.body)).toContain('Ce formulaire a déjà été envoyé');
    expect(String(again.body)).not.toContain('class="secret"');
    expect(await h.appCount()).toBe(before + 1);
    expect(h.events.filter((event) => event.type === 'app.registered')).toHaveLength(1);
    expect(h.events.at(-1)).toMatchObject({ type: 'console.denied', reason: 'resubmitted', operator: 'u-op' });
  });

  it('refuses a rotation sent a second time: the secret it showed stays the current one', async () => {
    const h = await harness();
    const { csrf, once } = await h.formOf(`/console/${ACCOUNT}/apps/${CLIENT_ID}`);
    const form = { csrf, once, overlap: '0' };
    const first = await h.post(`/console/${ACCOUNT}/apps/${CLIENT_ID}/rotate-secret`, form);
    expect(first.status).toBe(200);
    const secret = secretOf(first);
    const again = await h.post(`/console/${ACCOUNT}/apps/${CLIENT_ID}/rotate-secret`, form);
    expect(again.status).toBe(409);
    expect(String(again.body)).toContain('This form was sent already');
    const app = await contextOf(h.sentinel).apps.findApp(ACCOUNT, CLIENT_ID);
    expect(verifyClientSecret(secret, app?.clientSecretHash)).toBe(true);
    expect(h.events.filter((event) => event.type === 'app.secret_rotated')).toHaveLength(1);
    expect(h.events.at(-1)).toMatchObject({ type: 'console.denied', reason: 'resubmitted', target: CLIENT_ID });
  });

  it('takes a form refused before its change ran again once fixed, and refuses one without the field', async () => {
    const h = await harness();
    const { csrf, once } = await h.formOf(`/console/${ACCOUNT}/apps`);
    const form = { csrf, once, name: 'Fixed', auth: 'client_secret_basic' };
    const before = await h.appCount();
    const wrong = await h.post(`/console/${ACCOUNT}/apps`, { ...form, redirect_uris: 'https://fixed.example.com/cb#fragment' });
    expect(wrong.status).toBe(400);
    const fixed = await h.post(`/console/${ACCOUNT}/apps`, { ...form, redirect_uris: 'https://fixed.example.com/cb' });
    expect(fixed.status).toBe(200);
    const { once: _once, ...without } = { ...form, redirect_uris: 'https://other.example.com/cb' };
    const missing = await h.post(`/console/${ACCOUNT}/apps`, without);
    expect(missing.status).toBe(400);
    expect(String(missing.body)).toContain('reload the page');
    expect(await h.appCount()).toBe(before + 1);
  });
});
