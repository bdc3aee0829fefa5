/**
 * The operator console mounts like the service on every framework of test/helpers/hosts.ts: its pages with the
 * security headers, a form body read through the adapter, the host's own routes untouched, and a mount prefix
 * kept in the addresses it hands out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsole } from '../src/console/index.js';
import type { Sentinel } from '../src/index.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';

describe.each(HOSTS)('console on $name', (host) => {
  let mounted: MountedHost;
  let prefixed: MountedHost;

  beforeAll(async () => {
    const operatorConsole = createConsole(makeSentinel(), { authorize: () => 'admin' });
    // The hosts mount anything with the service's shape (`config` and `handle`), which is what the adapters read.
    const asService = operatorConsole as unknown as Sentinel;
    [mounted, prefixed] = await Promise.all([host.mount(asService), host.mount(asService, { prefix: '/ops' })]);
  });
  afterAll(async () => {
    await Promise.all([mounted?.close(), prefixed?.close()]);
  });

  it('serves its pages with the login page headers and leaves the host routes alone', async () => {
    const page = await fetch(`${mounted.url}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(await page.text()).toContain('<form method="get" action="/console/sign-in">');
    const ping = await fetch(`${mounted.url}/host/ping`);
    expect(await ping.text()).toBe('pong');
  });

  it('reads a form through the adapter and refuses a change without a session', async () => {
    const refused = await fetch(`${mounted.url}/console/${ACCOUNT}/apps/x/delete`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrf=forged',
    });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('did not come from this console');
  });

  it('keeps a mount prefix in the addresses it hands out', async () => {
    const page = await fetch(`${prefixed.url}/ops/console/${ACCOUNT}/apps`, { redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe(`/ops/console/sign-in?account=${ACCOUNT}`);
  });
});
