/**
 * A client ID metadata document URL is anyone's to make up, so the service's answer to one must not tell what lies
 * behind it: a closed port, a port that accepts TCP but speaks no TLS, a TLS server with a certificate nobody trusts,
 * a host that does not resolve, and an https server answering something that is not the document all look alike to
 * the client (status, error, description, and no sooner than the fetch deadline), at the authorization, PAR and token
 * endpoints. The operator hears the real cause through `onError`, once per fetch; a failed URL is not fetched again
 * for a few seconds. Outside development, a client_id URL may not name a port at all.
 */
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientIdMetadataResolver, DOCUMENT_UNAVAILABLE, FAILURE_RETRY_MS } from '../src/apps/client-id-metadata.js';
import { MemoryAppStore } from '../src/apps/memory-app-store.js';
import { withClientIdMetadataDocuments } from '../src/apps/resolving-app-store.js';
import { resolveConfig } from '../src/config.js';
import type { ErrorContext } from '../src/hooks.js';
import { contextOf } from '../src/http/context.js';
import { createSentinel, type Sentinel, type SentinelResponse } from '../src/index.js';
import { movableClock } from './helpers/clock.js';
import { ACCOUNT_PATH, call, postForm, TOKEN_PATH } from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions } from './helpers/fixtures.js';
import { type LoopbackTLS, loopbackTLS } from './helpers/loopback-tls.js';
import { pkcePair } from './helpers/pkce.js';

/** The fetch deadline of these tests (`clientJwks.timeoutMs`): every failure answers no sooner. */
const TIMEOUT_MS = 1000;
const CALLBACK = 'http://127.0.0.1:9999/cb';
/** A host name the resolver refuses at once (EINVAL: longer than a DNS name may be), so no test needs a network. */
const UNRESOLVABLE = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(60)}.example`;

let tls: LoopbackTLS;
let untrusted: LoopbackTLS;
const servers: (HttpsServer | TcpServer)[] = [];
let httpsOrigin: string;
let untrustedOrigin: string;
let closedPort: number;
let silentPort: number;
let plaintextPort: number;
/** Requests the trusted https server has answered. */
let hits = 0;

/** Every connection the servers accepted: the silent one's would otherwise keep `close()` waiting. */
const sockets = new Set<Socket>();

async function listen<T extends HttpsServer | TcpServer>(server: T): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.on('connection', (socket: Socket) => sockets.add(socket));
  servers.push(server);
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  tls = loopbackTLS();
  untrusted = loopbackTLS();
  // A real https server that answers anything but a document: a web page, a missing path, a JSON API of its own.
  const port = await listen(
    createHttpsServer({ key: tls.key, cert: tls.cert }, (request, response) => {
      hits += 1;
      const path = (request.url ?? '').split('?')[0];
      if (path === '/page.html') response.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>');
      else if (path === '/api.json') response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      else response.writeHead(404).end();
    }),
  );
  httpsOrigin = `https://127.0.0.1:${port}`;
  untrustedOrigin = `https://127.0.0.1:${await listen(
    createHttpsServer({ key: untrusted.key, cert: untrusted.cert }, (_request, response) => response.end('{}')),
  )}`;
  // Accepts connections and never says a word: the fetch can only time out.
  silentPort = await listen(createTcpServer(() => {}));
  // Accepts connections and speaks another protocol: the TLS handshake fails at once.
  plaintextPort = await listen(createTcpServer((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n')));
  // A port that was just open and now refuses connections.
  const closing = createTcpServer();
  await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
  closedPort = (closing.address() as AddressInfo).port;
  await new Promise((resolve) => closing.close(resolve));
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

/** The failure classes a prober would like to tell apart, each a client_id URL of its own (`tag` keeps them apart). */
function probes(tag: string): Record<string, string> {
  return {
    'closed port': `https://127.0.0.1:${closedPort}/${tag}.json`,
    'TCP without TLS': `https://127.0.0.1:${plaintextPort}/${tag}.json`,
    'TCP that never answers': `https://127.0.0.1:${silentPort}/${tag}.json`,
    'untrusted certificate': `${untrustedOrigin}/${tag}.json`,
    'host that does not resolve': `https://${UNRESOLVABLE}/${tag}.json`,
    'https page, not a document': `${httpsOrigin}/page.html?${tag}`,
    'https JSON of another kind': `${httpsOrigin}/api.json?${tag}`,
    'https 404': `${httpsOrigin}/${tag}.json`,
  };
}

/** The service with documents on (resolved with the test's trust anchor), reporting to `errors`. */
function service(errors: [unknown, ErrorContext][]): Sentinel {
  const options = baseOptions({
    clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true },
    clientJwks: { timeoutMs: TIMEOUT_MS },
    onError: (error, context) => errors.push([error, context]),
  });
  const config = createSentinel(options).config;
  const apps = withClientIdMetadataDocuments(new MemoryAppStore(config.apps), new ClientIdMetadataResolver(config, { ca: tls.cert }));
  const { clientIdMetadataDocuments: _documents, ...rest } = options;
  const sentinel = createSentinel({ ...rest, apps: [], appStore: apps });
  (contextOf(sentinel).config.clientIdMetadataDocuments as { enabled: boolean }).enabled = true;
  return sentinel;
}

/** What a client sees of a response: everything but the headers that differ per request anyway. */
function visible(response: SentinelResponse): unknown {
  const { 'content-security-policy': _csp, 'x-request-id': _id, ...headers } = response.headers;
  // The page's nonce differs per response; nothing else may.
  return { status: response.status, headers, body: String(response.body ?? '').replace(/nonce-[^'"]+|nonce="[^"]+"/g, 'nonce') };
}

async function authorize(sentinel: Sentinel, clientId: string): Promise<SentinelResponse> {
  const { challenge } = pkcePair();
  return call(sentinel, {
    path: `${ACCOUNT_PATH}/authorize`,
    query: new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: CALLBACK,
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }),
  });
}

function par(sentinel: Sentinel, clientId: string): Promise<SentinelResponse> {
  const { challenge } = pkcePair();
  return postForm(
    sentinel,
    `${ACCOUNT_PATH}/par`,
    new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: CALLBACK,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString(),
  );
}

function token(sentinel: Sentinel, clientId: string): Promise<SentinelResponse> {
  return postForm(
    sentinel,
    TOKEN_PATH,
    new URLSearchParams({
      grant_type: 'authorization_code',
      code: 'x'.repeat(43),
      code_verifier: pkcePair().verifier,
      redirect_uri: CALLBACK,
      client_id: clientId,
    }).toString(),
  );
}

describe('a client_id URL whose document cannot be had', () => {
  for (const [endpoint, send] of [
    ['authorization', authorize],
    ['PAR', par],
    ['token', token],
  ] as const) {
    it(`answers the same at the ${endpoint} endpoint, whatever the cause, and tells onError the cause`, async () => {
      const errors: [unknown, ErrorContext][] = [];
      const sentinel = service(errors);
      // All at once: each waits out the deadline, so in turn they would take a second each.
      const timed = await Promise.all(
        Object.entries(probes(endpoint)).map(async ([cause, url]) => {
          const started = performance.now();
          const response = await send(sentinel, url);
          return { cause, url, response, elapsed: performance.now() - started };
        }),
      );
      const answers = new Map(timed.map(({ cause, response }) => [cause, visible(response)]));
      const [first, ...rest] = [...answers.values()];
      for (const [cause, answer] of answers) expect(answer, cause).toEqual(first);
      expect(rest).toHaveLength(7);
      for (const { cause, url, response, elapsed } of timed) {
        expect(response.status, cause).toBe(401);
        // No failure answers sooner than the fetch deadline: a refused connection looks like one that hangs.
        expect(elapsed, cause).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
        // The operator hears what happened, naming the URL; the client hears none of it.
        const reported = errors.filter(([error]) => String((error as Error).message).includes(url));
        expect(reported, cause).toHaveLength(1);
        expect(reported[0]?.[1]).toEqual({ route: 'client-id-metadata', accountId: ACCOUNT });
      }
      if (endpoint !== 'authorization') {
        const body = JSON.parse(String((first as { body: string }).body));
        expect(body).toEqual({ error: 'invalid_client', error_description: DOCUMENT_UNAVAILABLE });
      } else {
        expect((first as { body: string }).body).toContain(DOCUMENT_UNAVAILABLE.replace(/'/g, '&#39;'));
      }
      // The reports are precise: each names its own cause.
      const messages = errors.map(([error]) => (error as Error).message).join('\n');
      expect(messages).toMatch(/could not be reached/);
      expect(messages).toMatch(/did not answer in time/);
      expect(messages).toMatch(/does not resolve/);
      expect(messages).toMatch(/answered 404/);
      expect(messages).toMatch(/not JSON/);
      expect(messages).toMatch(/no client_id/);
    });
  }

  it('refuses a private address with the same answer, and tells onError why', async () => {
    const errors: [unknown, ErrorContext][] = [];
    const config = resolveConfig(
      baseOptions({
        clientIdMetadataDocuments: { enabled: true },
        clientJwks: { timeoutMs: TIMEOUT_MS },
        onError: (error, context) => errors.push([error, context]),
      }),
    );
    const resolver = new ClientIdMetadataResolver(config, { ca: tls.cert });
    const before = hits;
    await expect(resolver.resolve(ACCOUNT, 'https://127.0.0.1/client.json')).rejects.toMatchObject({
      code: 'invalid_client',
      status: 401,
      description: DOCUMENT_UNAVAILABLE,
    });
    expect(hits).toBe(before);
    expect(errors.map(([error]) => (error as Error).message)).toEqual([expect.stringMatching(/private, loopback or link-local/)]);
  });

  it('does not fetch a failed URL again for a few seconds, and tells onError once', async () => {
    const errors: [unknown, ErrorContext][] = [];
    const config = resolveConfig(
      baseOptions({
        clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true },
        clientJwks: { timeoutMs: TIMEOUT_MS },
        onError: (error, context) => errors.push([error, context]),
      }),
    );
    const resolver = new ClientIdMetadataResolver(config, { ca: tls.cert });
    const url = `${httpsOrigin}/retry.json`;
    let before = hits;
    const refusal = { code: 'invalid_client', description: DOCUMENT_UNAVAILABLE };
    await expect(resolver.resolve(ACCOUNT, url)).rejects.toMatchObject(refusal);
    await expect(resolver.resolve(ACCOUNT, url)).rejects.toMatchObject(refusal);
    expect(hits - before).toBe(1);
    expect(errors).toHaveLength(1);
    const clock = movableClock();
    try {
      await clock.advance(FAILURE_RETRY_MS + 1);
      before = hits;
      await expect(resolver.resolve(ACCOUNT, url)).rejects.toMatchObject(refusal);
      expect(hits - before).toBe(1);
      expect(errors).toHaveLength(2);
    } finally {
      clock.restore();
    }
  });
});

describe('a client_id URL naming a port', () => {
  it('is refused outside development, before anything is looked up or fetched', async () => {
    const config = resolveConfig(baseOptions({ clientIdMetadataDocuments: { enabled: true } }));
    const resolver = new ClientIdMetadataResolver(config);
    for (const url of [`https://${UNRESOLVABLE}:8443/client.json`, `https://${UNRESOLVABLE}:22/client.json`]) {
      const started = performance.now();
      await expect(resolver.resolve(ACCOUNT, url), url).rejects.toMatchObject({
        code: 'invalid_client',
        description: 'the client_id URL must not name a port',
      });
      expect(performance.now() - started).toBeLessThan(TIMEOUT_MS / 2);
    }
  });

  it('is fetched with allowPrivateAddresses (development and tests)', async () => {
    const config = resolveConfig(
      baseOptions({ clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true }, clientJwks: { timeoutMs: TIMEOUT_MS } }),
    );
    const before = hits;
    await expect(new ClientIdMetadataResolver(config, { ca: tls.cert }).resolve(ACCOUNT, `${httpsOrigin}/dev.json`)).rejects.toMatchObject({
      code: 'invalid_client',
    });
    expect(hits - before).toBe(1);
  });
});
