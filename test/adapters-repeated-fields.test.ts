/**
 * A field a request may carry once (RFC 9110 §5.3) sent twice is refused alike in every framework. Node keeps the
 * first `Authorization` or `Content-Type` line and drops the others; a fetch runtime joins them with `, `. The
 * Node adapters hand the core every line, as the fetch one does, so a second token or media type is never dropped
 * unseen on one framework and refused on another.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ACCOUNT,
  appTokenPath,
  basic,
  CC_ONLY_CLIENT_ID,
  CC_ONLY_SECRET,
  ccBody,
  CLIENT_ID,
  CONSUMER_UUID,
  makeSentinel,
} from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import { rawExchange } from './helpers/raw-http.js';

const INITIAL = 'initial-access-token-for-repeated-fields';
let running: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(running.map((host) => host.close()));
  running = [];
});

describe.each(HOSTS)('$name adapter', (host) => {
  async function start(): Promise<string> {
    const mounted = await host.mount(makeSentinel());
    running.push(mounted);
    return mounted.url;
  }

  async function consumerToken(base: string): Promise<string> {
    const response = await fetch(`${base}${appTokenPath()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: ccBody(),
    });
    return ((await response.json()) as { access_token: string }).access_token;
  }

  it('refuses a guarded request with two Authorization lines, the valid token first', async () => {
    const base = await start();
    const token = await consumerToken(base);
    const path = `/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/brand/tokens`;
    const once = await rawExchange(base, [`GET ${path} HTTP/1.1`, `Authorization: Bearer ${token}`]);
    expect(once.status).toBe(200);
    const twice = await rawExchange(base, [`GET ${path} HTTP/1.1`, `Authorization: Bearer ${token}`, 'Authorization: Bearer another']);
    // RFC 6750 §3.1: two credentials are invalid_request (400), with the challenge.
    expect(twice.status).toBe(400);
    expect(JSON.parse(twice.body)).toMatchObject({ error: 'invalid_request' });
    expect(twice.head).toMatch(/\r\nwww-authenticate: Bearer realm="sentinel", error="invalid_request"/i);
  });

  it('refuses a registration with two Authorization lines, the initial access token first', async () => {
    const mounted = await host.mount(makeSentinel({ registration: { initialAccessToken: INITIAL } }));
    running.push(mounted);
    const head = [`POST /sentinel/api/account/${ACCOUNT}/register HTTP/1.1`, 'Content-Type: application/json'];
    const body = JSON.stringify({ grant_types: ['client_credentials'] });
    const twice = await rawExchange(mounted.url, [...head, `Authorization: Bearer ${INITIAL}`, 'Authorization: Bearer another'], body);
    expect(twice.status).toBe(400);
    expect(JSON.parse(twice.body)).toMatchObject({ error: 'invalid_request' });
    expect((await rawExchange(mounted.url, [...head, `Authorization: Bearer ${INITIAL}`], body)).status).toBe(201);
  });

  it('refuses a token request with two Authorization lines, the valid Basic credential first', async () => {
    const base = await start();
    const form = ccBody({ client_id: CC_ONLY_CLIENT_ID, client_secret: '' });
    const head = [`POST ${appTokenPath()} HTTP/1.1`, 'Content-Type: application/x-www-form-urlencoded'];
    const credential = `Authorization: ${basic(CC_ONLY_CLIENT_ID, CC_ONLY_SECRET)}`;
    expect((await rawExchange(base, [...head, credential], form)).status).toBe(200);
    const twice = await rawExchange(base, [...head, credential, `Authorization: ${basic(CLIENT_ID, 'wrong')}`], form);
    expect(twice.status).toBe(400);
    expect(JSON.parse(twice.body)).toMatchObject({ error: 'invalid_request' });
  });

  it('refuses a token request with two Content-Type lines, the form type first', async () => {
    const base = await start();
    const head = [`POST ${appTokenPath()} HTTP/1.1`, 'Content-Type: application/x-www-form-urlencoded'];
    expect((await rawExchange(base, head, ccBody())).status).toBe(200);
    const twice = await rawExchange(base, [...head, 'Content-Type: application/json'], ccBody());
    expect(twice.status).toBe(400);
    expect(JSON.parse(twice.body)).toMatchObject({ error: 'invalid_request' });
  });
});
