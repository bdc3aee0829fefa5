/**
 * A method a service path does not serve gets the core's `405` with `Allow` in every framework. Fastify routes only
 * the methods a route lists and answers the rest itself, so its adapter routes every method the server knows (TRACE
 * and QUERY among them) and hands Fastify's own refusal of a QUERY without a Content-Type to the core.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ACCOUNT, appTokenPath, makeSentinel } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import { rawExchange } from './helpers/raw-http.js';

let running: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(running.map((host) => host.close()));
  running = [];
});

const allow = (head: string) => /\r\nallow: ([^\r]*)/i.exec(head)?.[1];

describe.each(HOSTS)('$name adapter', (host) => {
  async function start(): Promise<string> {
    const mounted = await host.mount(makeSentinel());
    running.push(mounted);
    return mounted.url;
  }

  // WHATWG fetch forbids TRACE (`new Request` throws), so a fetch runtime never hands one to its handler.
  it.skipIf(host.name === 'fetch')('answers TRACE at the token endpoint with the core 405 and its Allow', async () => {
    const base = await start();
    const path = new URL(`${base}${appTokenPath()}`).pathname;
    const answer = await rawExchange(base, [`TRACE ${path} HTTP/1.1`]);
    expect(answer.status).toBe(405);
    expect(allow(answer.head)).toBe('POST');
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_request' });
  });

  it('answers QUERY without a Content-Type at the metadata with the core 405', async () => {
    const base = await start();
    const path = new URL(`${base}/sentinel/api/account/${ACCOUNT}/.well-known/openid-configuration`).pathname;
    const answer = await rawExchange(base, [`QUERY ${path} HTTP/1.1`], 'a=b');
    expect(answer.status).toBe(405);
    expect(allow(answer.head)).toMatch(/^GET/);
  });

  it('answers QUERY with a form at the token endpoint with the core 405', async () => {
    const base = await start();
    const path = new URL(`${base}${appTokenPath()}`).pathname;
    const answer = await rawExchange(base, [`QUERY ${path} HTTP/1.1`, 'Content-Type: application/x-www-form-urlencoded'], 'a=b');
    expect(answer.status).toBe(405);
    expect(allow(answer.head)).toBe('POST');
  });

  it('leaves a host path outside the service to the host', async () => {
    const base = await start();
    const answer = await rawExchange(base, ['TRACE /host/ping HTTP/1.1']);
    expect(answer.status).not.toBe(405);
  });
});
