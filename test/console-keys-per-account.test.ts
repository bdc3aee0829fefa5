/**
 * The console's keys page under `keysPerAccount`: each account signs with a ring of its own, so the page shows the
 * operator's account's ring, and rotating or revoking there changes the keys that account's tokens are signed with.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSentinel } from '../src/index.js';
import { createConsole } from '../src/console/index.js';
import { operatorCookie } from './helpers/console-session.js';
import { ACCOUNT, baseOptions } from './helpers/fixtures.js';

const rotation = { encryptionKey: randomBytes(32).toString('base64url'), rotateEverySeconds: 3600, prePublishSeconds: 360 };

async function accountKids(sentinel: ReturnType<typeof createSentinel>): Promise<string[]> {
  const response = await sentinel.handle({
    method: 'GET',
    path: `/sentinel/api/account/${ACCOUNT}/jwks`,
    query: new URLSearchParams(),
    headers: {},
  });
  return (JSON.parse(String(response?.body)) as { keys: { kid: string }[] }).keys.map((key) => key.kid).sort();
}

describe('console keys page with keysPerAccount', () => {
  it("shows, rotates and revokes the operator's account's own ring", async () => {
    // Its own event hook: a revocation's event names the kid, a public 43-character thumbprint the suite's scan of
    // events for secret-shaped values would flag.
    const events: { type: string; action?: string }[] = [];
    const onEvent = (event: { type: string; action?: string }) => events.push(event);
    const sentinel = createSentinel(baseOptions({ keys: undefined, keyRotation: rotation, keysPerAccount: true, onEvent }));
    await sentinel.ready();
    const before = await accountKids(sentinel);
    // No keysAccountId: an account's own ring is its admins' to change.
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const page = await operatorConsole.handle({
      method: 'GET',
      path: `/console/${ACCOUNT}/keys`,
      query: new URLSearchParams(),
      headers: { cookie },
    });
    const shown = [...String(page?.body).matchAll(/<tr><td><code>([^<]+)<\/code>/g)].map((match) => match[1] as string).sort();
    expect(shown).toEqual(before);
    const csrf = /name="csrf" value="([^"]+)"/.exec(String(page?.body))?.[1] as string;
    const post = (path: string) =>
      operatorConsole.handle({
        method: 'POST',
        path: `/console/${ACCOUNT}/${path}`,
        query: new URLSearchParams(),
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
        body: `csrf=${encodeURIComponent(csrf)}`,
      });
    expect((await post('keys/rotate'))?.status).toBe(303);
    const rotated = await accountKids(sentinel);
    expect(rotated.length).toBeGreaterThan(before.length);
    const revoked = before[0] as string;
    expect((await post(`keys/${encodeURIComponent(revoked)}/revoke`))?.status).toBe(303);
    expect(await accountKids(sentinel)).not.toContain(revoked);
    expect(events.filter((event) => event.type === 'console.changed').map((event) => event.action)).toEqual(['keys.rotate', 'keys.revoke']);
  });
});

describe("console keys: a viewer's confirmation page", () => {
  it('refuses a viewer as a viewer, not as an operator of another account', async () => {
    const events: { type: string; reason?: string }[] = [];
    const onEvent = (event: { type: string; reason?: string }) => events.push(event);
    const sentinel = createSentinel(baseOptions({ keys: undefined, keyRotation: rotation, keysPerAccount: true, onEvent }));
    await sentinel.ready();
    const [kid] = await accountKids(sentinel);
    const operatorConsole = createConsole(sentinel, { authorize: () => 'viewer' });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-view', 600);
    const page = await operatorConsole.handle({
      method: 'GET',
      path: `/console/${ACCOUNT}/keys/${encodeURIComponent(kid as string)}/revoke`,
      query: new URLSearchParams(),
      headers: { cookie },
    });
    expect(page?.status).toBe(403);
    expect(String(page?.body)).toContain('Your role is viewer');
    expect(events.filter((event) => event.type === 'console.denied').map((event) => event.reason)).toEqual(['viewer']);
  });
});
