/**
 * `trustProxy` as Express has it: a hop count or a list of trusted proxy addresses / CIDR ranges, the client
 * address being the right-most untrusted `X-Forwarded-For` entry. Units for the address walk, then every host
 * behind a real appending proxy (what nginx's `$proxy_add_x_forwarded_for` and most load balancers do): the
 * client is connected from 127.0.0.2 and sends forged `X-Forwarded-For` values, which must neither escape the
 * per-address throttle nor reach the audit events.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { clientIP } from '../src/http/client-ip.js';
import { ConfigurationError, type SentinelEvent, type SentinelRequest } from '../src/index.js';
import { normalizeAddress } from '../src/http/trusted-proxies.js';
import { ACCOUNT, CLIENT_ID, makeSentinel, PASSWORD, REDIRECT_URI, USERNAME } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';

function req(forwarded: string | string[] | undefined, ip: string | undefined): SentinelRequest {
  return { method: 'GET', path: '/', query: new URLSearchParams(), headers: { 'x-forwarded-for': forwarded }, ip };
}

describe('clientIP', () => {
  it('false: the socket address, whatever the header says', () => {
    expect(clientIP({ trustProxy: false }, req('198.51.100.1', '10.0.0.1'))).toBe('10.0.0.1');
  });

  it('a hop count: the right-most entry beyond that many proxies, never one the client wrote further left', () => {
    const forged = req('6.6.6.6, 203.0.113.9', '10.0.0.1');
    expect(clientIP({ trustProxy: 1 }, forged)).toBe('203.0.113.9');
    expect(clientIP({ trustProxy: 2 }, req('6.6.6.6, 203.0.113.9, 10.0.0.2', '10.0.0.1'))).toBe('203.0.113.9');
    expect(clientIP({ trustProxy: 0 }, forged)).toBe('10.0.0.1');
    // More hops trusted than there are entries: the left-most one, as Express does.
    expect(clientIP({ trustProxy: 5 }, forged)).toBe('6.6.6.6');
    expect(clientIP({ trustProxy: 1 }, req(undefined, '10.0.0.1'))).toBe('10.0.0.1');
  });

  it('a list: skips trusted proxies and CIDR ranges from the right, stops at the first untrusted address', () => {
    const option = ['10.0.0.0/8', '2001:db8::/32', 'loopback'];
    expect(clientIP({ trustProxy: option }, req('6.6.6.6, 203.0.113.9, 10.9.9.9', '127.0.0.1'))).toBe('203.0.113.9');
    expect(clientIP({ trustProxy: option }, req('6.6.6.6, 2001:db8::5', '::ffff:10.1.1.1'))).toBe('6.6.6.6');
    // The socket is not a trusted proxy: the header is not read at all.
    expect(clientIP({ trustProxy: option }, req('6.6.6.6', '198.51.100.4'))).toBe('198.51.100.4');
  });

  it('true: the left-most entry (for proxies that replace the header)', () => {
    expect(clientIP({ trustProxy: true }, req('203.0.113.9, 10.0.0.1', '10.0.0.1'))).toBe('203.0.113.9');
  });

  it('joins repeated headers, ignores empty entries, and gives no address for garbage a proxy passed on', () => {
    expect(clientIP({ trustProxy: 1 }, req(['6.6.6.6', '203.0.113.9, '], '10.0.0.1'))).toBe('203.0.113.9');
    expect(clientIP({ trustProxy: 1 }, req('not-an-address', '10.0.0.1'))).toBeNull();
  });

  it('normalizes spellings so one client has one throttle key', () => {
    expect(normalizeAddress('::FFFF:203.0.113.7')).toBe('203.0.113.7');
    expect(normalizeAddress('[2001:DB8::1]:443')).toBe('2001:db8::1');
    expect(normalizeAddress('203.0.113.7:5000')).toBe('203.0.113.7');
    expect(normalizeAddress('203.0.113.7\r\nX: 1')).toBeNull();
  });

  it('refuses an unusable option at startup, naming trustProxy', () => {
    for (const trustProxy of [-1, 1.5, ['10.0.0.0/33'], ['nginx'], ['10.0.0.1/8/1']]) {
      expect(() => makeSentinel({ trustProxy })).toThrow(ConfigurationError);
    }
  });
});

/** A reverse proxy that appends the address it received the request from to X-Forwarded-For, like nginx does. */
async function appendingProxy(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server: Server = createServer((incoming, outgoing) => {
    const forwarded = incoming.headers['x-forwarded-for'];
    const peer = incoming.socket.remoteAddress ?? '';
    const headers: IncomingHttpHeaders = { ...incoming.headers, 'x-forwarded-for': forwarded ? `${forwarded}, ${peer}` : peer };
    const proxied = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    incoming.pipe(proxied);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One HTTP exchange from the local address 127.0.0.2 (a different client than the proxy's 127.0.0.1). */
function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'GET',
        headers: options.headers,
        localAddress: '127.0.0.2',
      },
      (answer) => {
        let body = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk: string) => {
          body += chunk;
        });
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

const ACCOUNT_PATH = `/sentinel/api/account/${ACCOUNT}`;

async function attempt(base: string, username: string, password: string, forged: string): Promise<number> {
  const query = new URLSearchParams({ response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, state: 'st' });
  const authorize = await send(`${base}${ACCOUNT_PATH}/authorize?${query}`, { headers: { 'x-forwarded-for': forged } });
  expect(authorize.status).toBe(302);
  const loginURL = `${base}${String(authorize.headers.location)}`;
  const page = await send(loginURL, { headers: { 'x-forwarded-for': forged } });
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
  const posted = await send(loginURL, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': forged },
    body: new URLSearchParams({ csrf_token: csrf, username, password }).toString(),
  });
  return posted.status;
}

describe('behind an appending proxy, trustProxy as a hop count', () => {
  const running: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const one of running.splice(0)) await one.close();
  });

  for (const [index, host] of HOSTS.entries()) {
    it(`${host.name}: forged X-Forwarded-For neither escapes the per-address limit nor reaches the events`, async () => {
      const events: SentinelEvent[] = [];
      const sentinel = makeSentinel({
        trustProxy: 1,
        throttle: { maxFailures: 10, maxFailuresPerIp: 3, windowSeconds: 60 },
        onEvent: (event) => events.push(event),
      });
      const mounted: MountedHost = await (HOSTS[index] as (typeof HOSTS)[number]).mount(sentinel);
      running.push(mounted);
      const proxy = await appendingProxy(mounted.url);
      running.push(proxy);
      for (let n = 0; n < 3; n += 1) expect(await attempt(proxy.url, `user-${n}`, 'guess', `198.51.100.${n + 1}`)).toBe(200);
      expect(await attempt(proxy.url, USERNAME, PASSWORD, '198.51.100.99')).toBe(429);
      const ips = new Set(events.filter((event) => event.type.startsWith('login.')).map((event) => event.ip));
      expect([...ips]).toEqual(['127.0.0.2']);
    });
  }
});
