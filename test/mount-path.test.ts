/**
 * The mount path the adapters hand over (`SentinelRequest.mountPath`) heads every Location, form action and cookie
 * path the core writes. A host mounted under a route parameter (`app.use('/:tenant', …)`) lets the client choose it,
 * and Express passes the segment raw: the core refuses one that is not a run of `/pchar…` segments
 * (src/http/mount-path.ts) with a 400 and stores nothing, through the core and through Express alike.
 */
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { toExpress } from '../adapters/express/index.js';
import { toFastify } from '../adapters/fastify/index.js';
import { toFetch } from '../adapters/fetch/index.js';
import { createConsole } from '../src/console/index.js';
import { isMountPath } from '../src/http/mount-path.js';
import { ConfigurationError, type SentinelRequest } from '../src/index.js';
import { MemoryStore } from '../src/stores/memory.js';
import { deviceApps } from './helpers/device-drive.js';
import { ACCOUNT, CLIENT_ID, makeSentinel } from './helpers/fixtures.js';

const AUTHORIZE = `/sentinel/api/account/${ACCOUNT}/authorize`;
const DEVICE = `/sentinel/api/account/${ACCOUNT}/device`;
const QUERY = `response_type=code&client_id=${CLIENT_ID}&state=s1`;

/** Mount paths a client can make a parameterised mount produce (or a host can misconfigure), and why each is refused. */
const REFUSED: ReadonlyArray<[string, string]> = [
  ['/\\evil.com', 'a backslash: a browser reads `/\\evil.com` as `//evil.com`'],
  ['//evil.com', 'an empty segment: scheme-relative'],
  ['/t1//evil.com', 'an empty segment inside'],
  ['/a;b', 'a semicolon ends the cookie Path attribute'],
  ["/a'b", 'a quote ends an HTML attribute'],
  ['/a"b', 'a double quote'],
  ['/a<b', 'not a pchar'],
  ['/a b', 'a space'],
  ['/a\r\nSet-Cookie: x=1', 'CR/LF'],
  ['/a\u0000b', 'a control character'],
  ['/..', 'a dot-dot segment'],
  ['/t1/.', 'a dot segment'],
  ['/%2e%2E', 'a dot-dot segment spelled with %2E, which browsers resolve as ..'],
  ['/t1/.%2e', 'a half-encoded dot-dot segment'],
  ['/%2E', 'an encoded dot segment'],
  ['/idp/', 'a trailing slash (an empty last segment)'],
  ['idp', 'no leading slash'],
  ['http://evil.com', 'an absolute URL'],
  ['/%zz', 'a broken percent-encoding'],
  ['/é', 'a non-ASCII character left undecoded'],
];

const ACCEPTED = [
  '',
  '/idp',
  '/idp/tenant-a',
  '/t1',
  '/%5Cevil.com',
  '/%2F%2Fevil.com',
  '/a:b@c',
  '/a!$&()*+,=~_.b',
  '/...',
  '/%2e%2e%2e',
  '/.%2eb',
];

describe('the mount path rule', () => {
  it.each(REFUSED)('refuses %j (%s)', (value) => {
    expect(isMountPath(value)).toBe(false);
  });

  it.each(ACCEPTED)('accepts %j', (value) => {
    expect(isMountPath(value)).toBe(true);
  });
});

function authorizeRequest(mountPath: string): SentinelRequest {
  return { method: 'GET', path: AUTHORIZE, query: new URLSearchParams(QUERY), headers: {}, mountPath };
}

describe('the core refuses a malformed mount path', () => {
  it.each(REFUSED)('authorize under %j: 400 invalid_request, no Location, nothing stored (%s)', async (mountPath) => {
    const store = new MemoryStore();
    const sentinel = makeSentinel({ store });
    const before = store.size;
    const response = await sentinel.handle(authorizeRequest(mountPath));
    expect(response?.status).toBe(400);
    expect(response?.headers.location).toBeUndefined();
    expect(response?.headers['set-cookie']).toBeUndefined();
    expect(response?.body).toContain('invalid_request');
    expect(store.size).toBe(before);
  });

  it('a well-formed mount path still heads the login redirect, and the interaction is stored', async () => {
    const store = new MemoryStore();
    const sentinel = makeSentinel({ store });
    const before = store.size;
    const response = await sentinel.handle(authorizeRequest('/tenant-a'));
    expect(response?.status).toBe(302);
    expect(response?.headers.location).toMatch(new RegExp(`^/tenant-a/sentinel/api/account/${ACCOUNT}/login\\?interaction=`));
    expect(store.size).toBeGreaterThan(before);
  });

  it('the code entry page under a mount with a semicolon is a 400, not a 500 from the cookie serializer', async () => {
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ apps: deviceApps(), onError: (error) => void errors.push(error) });
    const entry = (mountPath: string) =>
      sentinel.handle({ method: 'GET', path: DEVICE, query: new URLSearchParams(), headers: {}, mountPath });
    const served = await entry('/tenant-a');
    expect(served?.status).toBe(200);
    expect(served?.headers['set-cookie']).toMatch(new RegExp(`; Path=/tenant-a${DEVICE};`));
    const refused = await entry('/a;b');
    expect(refused?.status).toBe(400);
    expect(refused?.headers['set-cookie']).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('a path that is not the service’s is still handed back, whatever the mount path', async () => {
    const sentinel = makeSentinel();
    const response = await sentinel.handle({
      method: 'GET',
      path: '/host/page',
      query: new URLSearchParams(),
      headers: {},
      mountPath: '/\\x',
    });
    expect(response).toBeNull();
  });
});

describe('the operator console keeps the same rule', () => {
  const consoleRequest = (mountPath: string): SentinelRequest => ({
    method: 'GET',
    path: '/console/sign-in',
    query: new URLSearchParams({ account: ACCOUNT }),
    headers: {},
    mountPath,
  });

  it.each(['/\\evil.com', '//evil.com', '/a;b', '/..'])(
    'a sign-in under %j is a 400 page linking to the configured address, no redirect, nothing stored',
    async (mountPath) => {
      const store = new MemoryStore();
      const operatorConsole = createConsole(makeSentinel({ store }), { authorize: () => 'admin' });
      const before = store.size;
      const response = await operatorConsole.handle(consoleRequest(mountPath));
      expect(response?.status).toBe(400);
      expect(response?.headers.location).toBeUndefined();
      expect(response?.headers['set-cookie']).toBeUndefined();
      expect(response?.body).toContain('the path the service is mounted under is malformed');
      expect(response?.body).toContain('href="/console/"');
      expect(response?.body).not.toContain('evil.com');
      expect(store.size).toBe(before);
    },
  );

  it('a sign-in under a well-formed tenant mount still starts', async () => {
    const operatorConsole = createConsole(makeSentinel(), { authorize: () => 'admin' });
    const response = await operatorConsole.handle(consoleRequest('/tenant-a'));
    expect(response?.status).toBe(303);
    expect(response?.headers.location).toMatch(new RegExp(`^http://localhost/sentinel/api/account/${ACCOUNT}/authorize\\?`));
  });
});

/** One raw request: a client library would normalise the backslash a browser-crafted link can carry. */
function rawRequest(port: number, method: string, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`${method} ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    });
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe("Express mounted under a route parameter (app.use('/:tenant', …))", () => {
  const servers: ReturnType<typeof createServer>[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  async function tenantHost(): Promise<{ port: number; store: MemoryStore; errors: unknown[] }> {
    const store = new MemoryStore();
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ apps: deviceApps(), store, onError: (error) => void errors.push(error) });
    const app = express();
    app.use('/:tenant', toExpress(sentinel));
    const server = createServer(app);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port, store, errors };
  }

  it('serves a tenant segment as its mount: the login redirect stays under it', async () => {
    const { port } = await tenantHost();
    const answer = await rawRequest(port, 'GET', `/tenant-a${AUTHORIZE}?${QUERY}`);
    expect(answer).toMatch(/^HTTP\/1\.1 302 /);
    expect(answer).toMatch(new RegExp(`\\r\\nlocation: /tenant-a/sentinel/api/account/${ACCOUNT}/login\\?interaction=`, 'i'));
  });

  it.each(['/\\evil.com', '/\\\\evil.com', '/..', '/%2e%2e', '/a;b', "/a'b"])(
    'a client-chosen segment %j gets a 400 invalid_request page, no redirect, nothing stored',
    async (segment) => {
      const { port, store, errors } = await tenantHost();
      const before = store.size;
      const answer = await rawRequest(port, 'GET', `${segment}${AUTHORIZE}?${QUERY}`);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).not.toMatch(/\r\nlocation:/i);
      expect(answer).toMatch(/\r\ncontent-type: text\/html/i);
      expect(answer).toContain('invalid_request');
      expect(store.size).toBe(before);
      expect(errors).toEqual([]);
    },
  );

  it('the code entry page under a tenant segment with a semicolon is a 400, not a 500', async () => {
    const { port, errors } = await tenantHost();
    const answer = await rawRequest(port, 'GET', `/a;b${DEVICE}`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).not.toMatch(/\r\nset-cookie:/i);
    expect(errors).toEqual([]);
  });
});

describe("Fastify registered under a parametric prefix ({ prefix: '/:tenant' })", () => {
  it.each([
    ['/:tenant', '/t1'],
    ['/:tenant', '/tenant-with-a-longer-name'],
    ['/idp/:tenant', '/idp/t1'],
  ])('under %j, %j is the mount: routes match and the login redirect stays under it', async (prefix, mount) => {
    const app = Fastify();
    await app.register(toFastify(makeSentinel()), { prefix });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const port = (app.server.address() as AddressInfo).port;
      const answer = await rawRequest(port, 'GET', `${mount}${AUTHORIZE}?${QUERY}`);
      expect(answer).toMatch(/^HTTP\/1\.1 302 /);
      expect(answer).toMatch(new RegExp(`\\r\\nlocation: ${mount}/sentinel/api/account/${ACCOUNT}/login\\?interaction=`, 'i'));
      const refused = await rawRequest(port, 'GET', `${mount.replace(/[^/]+$/, '\\evil.com')}${AUTHORIZE}?${QUERY}`);
      expect(refused).toMatch(/^HTTP\/1\.1 400 /);
      expect(refused).not.toMatch(/\r\nlocation:/i);
    } finally {
      await app.close();
    }
  });
});

describe('a mount path given in configuration', () => {
  it.each(['idp', '/idp;v=1', '/a b', '/\\idp', '//idp', '/idp/../x', '/%2e%2e'])(
    'toFetch refuses mountPath %j when it is mounted, not on every request',
    (mountPath) => {
      expect(() => toFetch(makeSentinel(), { mountPath })).toThrow(ConfigurationError);
      expect(() => toFetch(makeSentinel(), { mountPath })).toThrow(/toFetch\.mountPath/);
    },
  );

  it.each(['', '/', '/idp', '/idp/', '/idp/tenant-a'])('toFetch takes mountPath %j', async (mountPath) => {
    const idp = toFetch(makeSentinel(), { mountPath });
    const prefix = mountPath.replace(/\/$/, '');
    const response = await idp(new Request(`http://localhost${prefix}/sentinel/well-known/jwks`));
    expect(response?.status).toBe(200);
  });

  it.each(['/..', '/ops/.', '/%2E%2E'])('createConsole refuses mountPath %j', (mountPath) => {
    expect(() => createConsole(makeSentinel(), { authorize: () => 'admin', mountPath })).toThrow(/console\.mountPath/);
  });
});
