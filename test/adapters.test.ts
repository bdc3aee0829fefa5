/**
 * Per-framework behaviour of the adapters, against every host in HOSTS: host body parsers before, after or absent;
 * mounting under a prefix; the host's error handler receiving what the adapter cannot answer; host routes next to
 * ours left untouched; and the response the core decides (status, headers, cookies, body type) reaching the wire
 * unchanged, HEAD included. Together with `test/adapter-flows.test.ts` it is what runs per framework; the
 * endpoint logic runs once, through `sentinel.handle()`, in `test/suites/`.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sentinel, SentinelBody, SentinelRequest, SentinelResponse } from '../src/index.js';
import {
  ACCOUNT,
  appTokenPath,
  ccBody,
  CLIENT_ID,
  CONSUMER_UUID,
  ISSUER,
  baseOptions,
  makeSentinel,
  PASSWORD,
  REDIRECT_URI,
  USERNAME,
} from './helpers/fixtures.js';
import { HOSTS, MCP_ADMIN_PATH, MCP_RESOURCE, type MountedHost, type MountOptions } from './helpers/hosts.js';
import { toFetch } from '../adapters/fetch/index.js';
import { createSentinel } from '../src/index.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** Sends a raw HTTP/1.1 request (`head` lines, then `body`) and answers the status line's code. */
function rawStatus(base: string, head: string[], body = ''): Promise<number> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`${[...head, `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`);
    });
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0)));
  });
}

let running: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(running.map((host) => host.close()));
  running = [];
});

/** A sentinel whose `handle` records the request it got and answers `response` (or throws `failure`). */
function scripted(input: { response?: SentinelResponse | null; failure?: Error }): {
  sentinel: Sentinel;
  seen: SentinelRequest[];
  bodies: (SentinelBody | undefined)[];
} {
  const real = makeSentinel();
  const seen: SentinelRequest[] = [];
  const bodies: (SentinelBody | undefined)[] = [];
  const sentinel: Sentinel = {
    ...real,
    async handle(request) {
      if (input.failure !== undefined) throw input.failure;
      seen.push(request);
      bodies.push(typeof request.body === 'function' ? await request.body() : request.body);
      return input.response === undefined ? null : input.response;
    },
  };
  return { sentinel, seen, bodies };
}

function text(body: SentinelBody | undefined): string {
  if (body === undefined) return '';
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  return new URLSearchParams(body as Record<string, string>).toString();
}

describe.each(HOSTS)('$name adapter', (host) => {
  async function start(sentinel: Sentinel, options?: MountOptions): Promise<string> {
    const mounted = await host.mount(sentinel, options);
    running.push(mounted);
    return mounted.url;
  }

  async function appToken(base: string, prefix = '', body = ccBody(), headers: Record<string, string> = FORM): Promise<Response> {
    return fetch(`${base}${prefix}${appTokenPath()}`, { method: 'POST', headers, body });
  }

  describe.each(['none', 'before', 'after'] as const)('host body parser %s', (bodyParser) => {
    it('issues a consumer-bound token and the guarded API accepts it', async () => {
      const base = await start(makeSentinel(), { bodyParser });
      const response = await appToken(base);
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const { access_token: token } = (await response.json()) as { access_token: string };
      const api = await fetch(`${base}/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/brand/tokens`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(api.status).toBe(200);
      expect(((await api.json()) as { claims: { sub: string } }).claims.sub).toBe(CONSUMER_UUID);
    });

    it('still sees a repeated body parameter as invalid_request', async () => {
      const base = await start(makeSentinel(), { bodyParser });
      const response = await appToken(base, '', `${ccBody()}&grant_type=client_credentials`);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid_request' });
    });

    it('answers a JSON body with 400 invalid_request, never a 5xx', async () => {
      const base = await start(makeSentinel(), { bodyParser });
      const json = JSON.stringify({ grant_type: 'client_credentials', client_id: 'x', client_secret: 'y' });
      const response = await appToken(base, '', json, { 'content-type': 'application/json' });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid_request' });
    });

    it('leaves the body of a host POST route to the host', async () => {
      const base = await start(makeSentinel(), { bodyParser });
      const response = await fetch(`${base}/host/echo`, { method: 'POST', headers: FORM, body: 'greeting=hello&to=world' });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ greeting: 'hello', to: 'world' });
    });
  });

  it('refuses a declared oversized body with 413 before reading it', async () => {
    const base = await start(makeSentinel({ bodyLimit: 1024 }));
    const response = await appToken(base, '', `${ccBody()}&pad=${'x'.repeat(4096)}`);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('refuses a chunked body that grows past the limit with 413', async () => {
    const base = await start(makeSentinel({ bodyLimit: 1024 }));
    const chunk = new TextEncoder().encode(`${ccBody()}&pad=${'x'.repeat(2048)}`);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(chunk);
        controller.close();
      },
    });
    const response = await fetch(`${base}${appTokenPath()}`, {
      method: 'POST',
      headers: FORM,
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
  });

  it('leaves host routes and unknown paths under the base path to the host', async () => {
    const base = await start(makeSentinel());
    const ping = await fetch(`${base}/host/ping`);
    expect(ping.status).toBe(200);
    expect(await ping.text()).toBe('pong');
    const unknown = await fetch(`${base}/sentinel/not-a-route`, { method: 'POST', headers: FORM, body: 'a=b' });
    expect(unknown.status).toBe(404);
    const jwks = await fetch(`${base}/sentinel/well-known/jwks`);
    expect(jwks.status).toBe(200);
  });

  describe('mounted under /idp', () => {
    it('serves the routes under the prefix only', async () => {
      const base = await start(makeSentinel(), { prefix: '/idp' });
      expect((await appToken(base, '/idp')).status).toBe(200);
      expect((await appToken(base)).status).toBe(404);
      expect((await fetch(`${base}/idp/sentinel/well-known/jwks`)).status).toBe(200);
      expect((await fetch(`${base}/host/ping`)).status).toBe(200);
    });

    it('sends the browser to the login page under the prefix and scopes the session cookie to it', async () => {
      const base = await start(makeSentinel(), { prefix: '/idp' });
      const query = new URLSearchParams({ response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, state: 's1' });
      const authorize = await fetch(`${base}/idp/sentinel/api/account/${ACCOUNT}/authorize?${query}`, { redirect: 'manual' });
      expect(authorize.status).toBe(302);
      const loginURL = authorize.headers.get('location') ?? '';
      expect(loginURL.startsWith(`/idp/sentinel/api/account/${ACCOUNT}/login?`)).toBe(true);
      const cookie = authorize.headers
        .getSetCookie()
        .map((line) => line.split(';')[0])
        .join('; ');
      const page = await fetch(`${base}${loginURL}`, { headers: { cookie } });
      expect(page.status).toBe(200);
      const html = await page.text();
      const action = (/<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '').replace(/&amp;/g, '&');
      expect(action.startsWith(`/idp/sentinel/api/account/${ACCOUNT}/login`)).toBe(true);
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1] ?? '';
      const login = await fetch(`${base}${action}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { ...FORM, cookie },
        body: new URLSearchParams({ csrf_token: csrf, username: USERNAME, password: PASSWORD }),
      });
      expect(login.status).toBe(303);
      expect(login.headers.get('location')?.startsWith(`${REDIRECT_URI}?code=`)).toBe(true);
      const session = login.headers.getSetCookie().find((line) => line.startsWith('sentinel_session='));
      expect(session).toMatch(/; Path=\/idp\/sentinel(;|$)/);
    });

    it('emits absolute URLs under the prefix when the issuer includes it', async () => {
      const base = await start(makeSentinel({ issuer: `${ISSUER}/idp` }), { prefix: '/idp' });
      const response = await fetch(`${base}/idp/sentinel/api/account/${ACCOUNT}/.well-known/oauth-authorization-server`);
      expect(response.status).toBe(200);
      const metadata = (await response.json()) as Record<string, string>;
      const accountIssuer = `${ISSUER}/idp/sentinel/api/account/${ACCOUNT}`;
      expect(metadata.issuer).toBe(accountIssuer);
      expect(metadata.token_endpoint).toBe(`${accountIssuer}/token`);
      expect(metadata.jwks_uri).toBe(`${ISSUER}/idp/sentinel/well-known/jwks`);
    });

    it('hands the core the path relative to the mount and the mount path', async () => {
      const { sentinel, seen, bodies } = scripted({ response: { status: 204, headers: {} } });
      const base = await start(sentinel, { prefix: '/idp' });
      const response = await fetch(`${base}/idp/sentinel/anything?x=1&x=2`, { method: 'POST', headers: FORM, body: 'a=b' });
      expect(response.status).toBe(204);
      expect(seen[0]?.path).toBe('/sentinel/anything');
      expect(seen[0]?.mountPath).toBe('/idp');
      expect(seen[0]?.query.getAll('x')).toEqual(['1', '2']);
      expect(seen[0]?.method).toBe('POST');
      expect(seen[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(text(bodies[0])).toBe('a=b');
    });
  });

  // koa-mount('/idp/') and Fastify's { prefix: '/idp/' } kept the slash in the mount and left 'sentinel/…' as the path,
  // which no route matches: every request of the service fell through to the host's 404.
  describe('mounted under /idp/, with a trailing slash', () => {
    it('hands the core the same path and mount path as under /idp', async () => {
      const { sentinel, seen } = scripted({ response: { status: 204, headers: {} } });
      const base = await start(sentinel, { prefix: '/idp/' });
      const response = await fetch(`${base}/idp/sentinel/anything?x=1`);
      expect(response.status).toBe(204);
      expect(seen[0]?.path).toBe('/sentinel/anything');
      expect(seen[0]?.mountPath).toBe('/idp');
    });

    it('serves the routes and scopes their URLs to /idp', async () => {
      const base = await start(makeSentinel(), { prefix: '/idp/' });
      expect((await appToken(base, '/idp')).status).toBe(200);
      const query = new URLSearchParams({ response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, state: 's1' });
      const authorize = await fetch(`${base}/idp/sentinel/api/account/${ACCOUNT}/authorize?${query}`, { redirect: 'manual' });
      expect(authorize.status).toBe(302);
      expect(authorize.headers.get('location')?.startsWith(`/idp/sentinel/api/account/${ACCOUNT}/login?`)).toBe(true);
    });
  });

  // RFC 9112 §3.2.2: a server must accept a request line in absolute form. Every Node host routes its own routes by
  // the target's path, but the adapters handed the core the whole URL: the service's paths fell through to a 404.
  describe.each([
    ['at the root', undefined],
    ['under /idp', '/idp'],
    ['under /idp/', '/idp/'],
  ] as const)('a request line in absolute form, %s', (_where, prefix) => {
    it('reaches the service as its origin form', async () => {
      const { sentinel, seen } = scripted({ response: { status: 204, headers: {} } });
      const base = await start(sentinel, prefix === undefined ? {} : { prefix });
      const mount = (prefix ?? '').replace(/\/$/, '');
      const { host: authority } = new URL(base);
      const status = await rawStatus(base, [`POST http://${authority}${mount}/sentinel/anything?x=1&x=2 HTTP/1.1`, `Host: ${authority}`]);
      expect(status).toBe(204);
      expect(seen[0]?.path).toBe('/sentinel/anything');
      expect(seen[0]?.mountPath).toBe(mount);
      expect(seen[0]?.query.getAll('x')).toEqual(['1', '2']);
    });

    it('issues a token as for the origin form', async () => {
      const base = await start(makeSentinel(), prefix === undefined ? {} : { prefix });
      const mount = (prefix ?? '').replace(/\/$/, '');
      const { host: authority } = new URL(base);
      const head = [
        `POST http://${authority}${mount}${appTokenPath()} HTTP/1.1`,
        `Host: ${authority}`,
        `Content-Type: ${FORM['content-type']}`,
      ];
      expect(await rawStatus(base, head, ccBody())).toBe(200);
    });

    // RFC 3986 §3.2.2: an authority is a host and a port of digits. Cut at the first `/`, `?` or `#` whatever came
    // before, `a:b` or `a;b` reached the service as the path after it, while the host's router (Node's url.parse)
    // read `/:b/…` or `;b/…`: a rule of the host's in front of the service's paths was passed by. (The fetch
    // adapter is handed a WHATWG Request, whose URL its host routes by too: there the two cannot disagree.)
    const nodeAuthorities = host.name === 'fetch' ? [] : [['a:b'], ['a;b'], ['user@localhost']];
    for (const [authority] of nodeAuthorities) {
      it(`serves nothing to one whose authority is ${authority}`, async () => {
        const base = await start(makeSentinel(), prefix === undefined ? {} : { prefix });
        const mount = (prefix ?? '').replace(/\/$/, '');
        const head = [
          `POST http://${authority}${mount}${appTokenPath()} HTTP/1.1`,
          `Host: ${new URL(base).host}`,
          `Content-Type: ${FORM['content-type']}`,
        ];
        // The host's own answer (404, or Fastify's 400 for a URL it cannot parse), never the service's token.
        expect(await rawStatus(base, head, ccBody())).toBeOneOf([400, 404]);
      });
    }
  });

  it('takes absolute URLs from the configured issuer, not from X-Forwarded-* headers', async () => {
    const base = await start(makeSentinel());
    const response = await fetch(`${base}/.well-known/oauth-authorization-server/sentinel/api/account/${ACCOUNT}`, {
      headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', host: 'evil.example' },
    });
    expect(response.status).toBe(200);
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe(`${ISSUER}/sentinel/api/account/${ACCOUNT}`);
    expect(JSON.stringify(metadata)).not.toContain('evil.example');
  });

  it('writes the response the core decided, byte for byte', async () => {
    const body = '{"ok":true}';
    const { sentinel } = scripted({
      response: {
        status: 201,
        headers: { 'content-type': 'application/json;charset=UTF-8', 'x-sentinel': 'yes', 'cache-control': 'no-store' },
        body,
      },
    });
    const base = await start(sentinel);
    const response = await fetch(`${base}/sentinel/anything`);
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toBe('application/json;charset=UTF-8');
    expect(response.headers.get('x-sentinel')).toBe('yes');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.text()).toBe(body);
  });

  it('writes an HTML body with its type and a non-2xx status the core decided, unchanged', async () => {
    const body = '<!doctype html><html lang="en"><title>x</title><p>ü &amp; €</p></html>';
    const { sentinel } = scripted({
      response: {
        status: 429,
        headers: { 'content-type': 'text/html; charset=utf-8', 'retry-after': '60', 'content-security-policy': "default-src 'none'" },
        body,
      },
    });
    const base = await start(sentinel);
    const response = await fetch(`${base}/sentinel/anything`);
    expect(response.status).toBe(429);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('retry-after')).toBe('60');
    expect(response.headers.get('content-security-policy')).toBe("default-src 'none'");
    expect(await response.text()).toBe(body);
  });

  it('answers HEAD on a GET route with the headers and no body', async () => {
    const base = await start(makeSentinel());
    const get = await fetch(`${base}/sentinel/well-known/jwks`);
    const head = await fetch(`${base}/sentinel/well-known/jwks`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(head.headers.get('cache-control')).toBe(get.headers.get('cache-control'));
    expect(await head.text()).toBe('');
  });

  // RFC 9110 §9.3.2: HEAD gets the header fields GET would. Koa and Fastify sent GET's Content-Length; Express and
  // fetch, whose writes leave the length to the server, sent none, so one request had two answers.
  it('answers HEAD with the Content-Length of the GET on the routes that answer HEAD', async () => {
    const base = await start(makeSentinel());
    for (const path of ['/sentinel/well-known/jwks', `/sentinel/api/account/${ACCOUNT}/.well-known/openid-configuration`]) {
      const get = await fetch(`${base}${path}`);
      const length = String(Buffer.byteLength(await get.text()));
      expect(get.headers.get('content-length')).toBe(length);
      const head = await fetch(`${base}${path}`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe(length);
    }
  });

  it('refuses HEAD on a route whose GET has effects: 405 with Allow, no redirect, no body', async () => {
    const base = await start(makeSentinel());
    const head = await fetch(`${base}/sentinel/api/account/${ACCOUNT}/authorize?response_type=code&client_id=${CLIENT_ID}`, {
      method: 'HEAD',
      redirect: 'manual',
    });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('GET, POST');
    expect(head.headers.get('location')).toBeNull();
    expect(await head.text()).toBe('');
  });

  it('writes a body-less redirect with every Set-Cookie and no framework default body', async () => {
    const cookies = ['sid=abc; Path=/sentinel; HttpOnly', 'csrf=def; Path=/sentinel; HttpOnly'];
    const { sentinel } = scripted({
      response: { status: 302, headers: { location: '/sentinel/login?i=1', 'set-cookie': cookies, 'cache-control': 'no-store' } },
    });
    const base = await start(sentinel);
    const response = await fetch(`${base}/sentinel/anything`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/sentinel/login?i=1');
    expect(response.headers.getSetCookie()).toEqual(cookies);
    expect(response.headers.get('content-type')).toBeNull();
    expect(await response.text()).toBe('');
  });

  // Express's setHeader and Koa's ctx.set replaced the Set-Cookie a host middleware had written before the service
  // answered (Fastify appends): the host's cookie vanished from every answer of the service that set one of its own.
  it("keeps the Set-Cookie the host's own middleware wrote beside the service's", async () => {
    const hostCookie = 'visitor=v1; Path=/';
    const cookies = ['sid=abc; Path=/sentinel; HttpOnly', 'csrf=def; Path=/sentinel; HttpOnly'];
    const { sentinel } = scripted({ response: { status: 302, headers: { location: '/sentinel/login?i=1', 'set-cookie': cookies } } });
    const base = await start(sentinel, { hostCookie });
    const response = await fetch(`${base}/sentinel/anything`, { redirect: 'manual' });
    expect(response.headers.getSetCookie()).toEqual([hostCookie, ...cookies]);
    const page = await start(makeSentinel(), { hostCookie });
    const entry = await fetch(`${page}/sentinel/api/account/${ACCOUNT}/device`);
    expect(entry.status).toBe(200);
    expect(entry.headers.getSetCookie().map((line) => line.split('=')[0])).toEqual(['visitor', 'sentinel_session_device']);
  });

  it('passes errors the adapter cannot answer to the host error handler', async () => {
    const failure = new Error('adapter-level failure');
    const received: unknown[] = [];
    const { sentinel } = scripted({ failure });
    const base = await start(sentinel, { onHostError: (error) => received.push(error) });
    const response = await fetch(`${base}/sentinel/anything`);
    expect(response.status).toBe(500);
    expect(await response.text()).toBe('host error handler');
    expect(received).toEqual([failure]);
  });

  it('passes a failing bearer check to the host error handler', async () => {
    const failure = new Error('verification backend down');
    const received: unknown[] = [];
    const real = makeSentinel();
    const sentinel: Sentinel = {
      ...real,
      checkBearer: async () => {
        throw failure;
      },
    };
    const base = await start(sentinel, { onHostError: (error) => received.push(error) });
    const response = await fetch(`${base}/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/brand/tokens`, {
      headers: { authorization: 'Bearer abc' },
    });
    expect(response.status).toBe(500);
    expect(received).toEqual([failure]);
  });

  it('answers a missing or foreign bearer token with 401 and a challenge', async () => {
    const base = await start(makeSentinel());
    const missing = await fetch(`${base}/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/brand/tokens`);
    expect(missing.status).toBe(401);
    // Both schemes are offered to a request without a token (RFC 9449 §7.1), Bearer first.
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer realm="sentinel", DPoP algs="[^"]+"$/);
    const token = ((await (await appToken(base)).json()) as { access_token: string }).access_token;
    const other = '11111111-2222-4333-8444-555555555555';
    const foreign = await fetch(`${base}/api/account/${ACCOUNT}/consumer/${other}/brand/tokens`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(foreign.status).toBe(401);
    expect(foreign.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
    // The same token sent with the DPoP scheme is refused in that scheme, with the proof algorithms.
    const asDPoP = await fetch(`${base}/api/account/${ACCOUNT}/consumer/${other}/brand/tokens`, {
      headers: { authorization: `DPoP ${token}` },
    });
    expect(asDPoP.status).toBe(401);
    expect(asDPoP.headers.get('www-authenticate')).toMatch(/^DPoP algs="[^"]+", error="invalid_token"/);
  });

  it('answers a valid token lacking a scope the route requires with 403 insufficient_scope and its challenge', async () => {
    const options = baseOptions({ defaultResources: [MCP_RESOURCE] });
    options.apps = (options.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, scope: 'mcp:read mcp:admin' } : app));
    const base = await start(createSentinel(options));
    const tokenFor = async (scope: string): Promise<string> => {
      const body = ccBody({ scope, resource: MCP_RESOURCE });
      const response = await fetch(`${base}/sentinel/api/account/${ACCOUNT}/token`, { method: 'POST', headers: FORM, body });
      return ((await response.json()) as { access_token: string }).access_token;
    };
    const refused = await fetch(`${base}${MCP_ADMIN_PATH}`, { headers: { authorization: `Bearer ${await tokenFor('mcp:read')}` } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toMatch(
      /^Bearer error="insufficient_scope", error_description="[^"]+", scope="mcp:admin", resource_metadata="https:\/\/mcp\.example\.com\/\.well-known\/oauth-protected-resource\/mcp"$/,
    );
    expect(((await refused.json()) as { error: string }).error).toBe('insufficient_scope');
    const admitted = await fetch(`${base}${MCP_ADMIN_PATH}`, { headers: { authorization: `Bearer ${await tokenFor('mcp:admin')}` } });
    expect(admitted.status).toBe(200);
    // An invalid token is still 401 invalid_token, not a scope refusal.
    const invalid = await fetch(`${base}${MCP_ADMIN_PATH}`, { headers: { authorization: 'Bearer not-a-token' } });
    expect(invalid.status).toBe(401);
    expect(invalid.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });
});

// A fetch Request keeps no parsed copy of a body the host read (Hono's parseBody(), a validator): nothing to hand over.
describe('the fetch adapter with a body the host already read', () => {
  it('answers 400 invalid_request saying so, and reports nothing to onError', async () => {
    const errors: unknown[] = [];
    const idp = toFetch(makeSentinel({ onError: (error) => errors.push(error) }), { ip: () => '127.0.0.1' });
    const tokenRequest = (): Request => new Request(`http://localhost${appTokenPath()}`, { method: 'POST', headers: FORM, body: ccBody() });
    const read = tokenRequest();
    await read.text();
    const locked = tokenRequest();
    locked.body?.getReader();
    for (const request of [read, locked]) {
      const response = await idp(request);
      expect(response?.status).toBe(400);
      const body = (await response?.json()) as { error: string; error_description: string };
      expect(body.error).toBe('invalid_request');
      expect(body.error_description).toMatch(/already read by the host/);
    }
    expect(errors).toEqual([]);
  });
});
