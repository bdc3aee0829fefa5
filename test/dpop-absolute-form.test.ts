/**
 * A DPoP proof names the URL it is for (`htu`, RFC 9449 §4.3), and the guard rebuilds the URL it compares from `Host`
 * and a trusted proxy's `X-Forwarded-*`. A request line in absolute form (`GET https://other.example/… HTTP/1.1`,
 * RFC 9112 §3.2.2) reaches the adapters as the request's URL: it must not let the client choose the scheme, nor
 * outrank a trusted proxy, so a proof made for another resource server stays refused in every Node framework.
 */
import { createHash } from 'node:crypto';
import { connect as http2Connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import formbody from '@fastify/formbody';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { requireAccessToken as requireFastifyAccessToken, toFastify } from '../adapters/fastify/index.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import { clientKey, dpopProof, keyedSentinel, type ClientKey } from './helpers/key-bound.js';

const API_PATH = `/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/brand/tokens`;
const API_ROUTE = '/api/account/:accountId/consumer/:consumerId/brand/tokens';
const V2_PATH = `/sentinel/api/v2/account/${ACCOUNT}/app/token`;
// Only the Node hosts hand an absolute-form target on; a fetch Request's URL is the runtime's.
const NODE_HOSTS = HOSTS.filter((host) => host.name !== 'fetch');

const open: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

/** The status code a raw HTTP/1.1 request gets. */
function statusOf(port: number, head: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(`${head}Connection: close\r\n\r\n`));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0)));
    socket.on('error', reject);
  });
}

async function boundToken(url: string, key: ClientKey): Promise<string> {
  const response = await fetch(`${url}${V2_PATH}?state=${CONSUMER_UUID}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      dpop: await dpopProof(key, { htm: 'POST', htu: `http://localhost${V2_PATH}` }),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

const ath = (token: string): string => createHash('sha256').update(token).digest('base64url');

describe.each(NODE_HOSTS)('DPoP htu with an absolute-form request target ($name)', (host) => {
  it('refuses a proof for another server whatever the target names, and accepts the one for this URL', async () => {
    const key = await clientKey();
    const mounted = await host.mount(keyedSentinel(key, {}, { trustProxy: ['loopback'] }));
    open.push(mounted);
    const { port } = new URL(mounted.url);
    const token = await boundToken(mounted.url, key);
    const call = async (target: string, htu: string, headers = ''): Promise<number> => {
      const proof = await dpopProof(key, { htm: 'GET', htu, ath: ath(token) });
      return statusOf(
        Number(port),
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headers}Authorization: DPoP ${token}\r\nDPoP: ${proof}\r\n`,
      );
    };
    const foreign = `https://other-rs.example${API_PATH}`;
    // The target's scheme is the client's word: over a plain connection the URL is http.
    expect(await call(foreign, foreign)).toBe(401);
    // A trusted proxy's X-Forwarded-* outrank the target's authority.
    const forwarded = 'X-Forwarded-Proto: https\r\nX-Forwarded-Host: api.example.com\r\n';
    expect(await call(foreign, foreign, forwarded)).toBe(401);
    expect(await call(foreign, `https://api.example.com${API_PATH}`, forwarded)).toBe(200);
    // The target's authority stands in for Host (RFC 9112 §3.2.2), as a Host header the client wrote would.
    expect(await call(`http://127.0.0.1:${port}${API_PATH}`, `http://127.0.0.1:${port}${API_PATH}`)).toBe(200);
  });
});

/** The status an HTTP/2 request (cleartext, prior knowledge) gets; HTTP/2 sends `:authority`, and here no `Host`. */
function http2StatusOf(port: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    const stream = session.request(headers);
    let status = 0;
    stream.on('response', (head) => {
      status = Number(head[':status']);
    });
    stream.on('error', reject);
    stream.resume();
    stream.on('end', () => {
      session.close();
      resolve(status);
    });
    stream.end();
  });
}

// RFC 9113 §8.3.1: an HTTP/2 request names its authority in `:authority`, which Node hands on among the headers, and
// a client need not send `Host` as well.
describe('DPoP htu over HTTP/2 (fastify with http2)', () => {
  it('takes the origin from :authority when the request has no Host header', async () => {
    const key = await clientKey();
    const sentinel = keyedSentinel(key);
    const app = Fastify({ http2: true });
    await app.register(formbody);
    await app.register(toFastify(sentinel));
    // The adapter's guard is typed for Fastify's default (HTTP/1) server; at run time it reads the same request.
    app.get(API_ROUTE, { preHandler: requireFastifyAccessToken(sentinel) as never }, async () => ({ ok: true }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = app.server.address() as AddressInfo;
      const authority = `127.0.0.1:${port}`;
      const issued = await app.inject({
        method: 'POST',
        url: `${V2_PATH}?state=${CONSUMER_UUID}`,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          dpop: await dpopProof(key, { htm: 'POST', htu: `http://localhost${V2_PATH}` }),
        },
        payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
      });
      expect(issued.statusCode).toBe(200);
      const token = (issued.json() as { access_token: string }).access_token;
      const call = async (htu: string): Promise<number> =>
        http2StatusOf(port, {
          ':method': 'GET',
          ':scheme': 'http',
          ':authority': authority,
          ':path': API_PATH,
          authorization: `DPoP ${token}`,
          dpop: await dpopProof(key, { htm: 'GET', htu, ath: ath(token) }),
        });
      expect(await call(`http://${authority}${API_PATH}`)).toBe(200);
      expect(await call(`http://other-rs.example${API_PATH}`)).toBe(401);
    } finally {
      await app.close();
    }
  });
});
