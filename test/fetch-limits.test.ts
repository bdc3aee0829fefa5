/**
 * The limits on what anyone can make the service fetch: client ID metadata documents (an https `client_id` is anyone's
 * to make up) and `jwks_uri` key sets. Real servers on loopback: TLS for documents (a throwaway certificate given to
 * the resolver as its trust anchor), plain http for key sets (`allowPrivateAddresses` allows it). A URL that fails is
 * one on a closed loopback port, refused at once.
 */
import { createServer as createHttpServer, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientIdMetadataResolver, DOCUMENT_UNAVAILABLE } from '../src/apps/client-id-metadata.js';
import { JwksFetchError, JwksFetcher } from '../src/client-assertion/jwks-fetch.js';
import { resolveConfig } from '../src/config.js';
import type { SentinelOptions } from '../src/index.js';
import { ACCOUNT, baseOptions } from './helpers/fixtures.js';
import { type LoopbackTLS, loopbackTLS } from './helpers/loopback-tls.js';

/** A port nothing listens on: a fetch there fails at once (connection refused). */
const CLOSED = 'https://127.0.0.1:1';
/** More failing URLs than either cache holds entries (1000). */
const FLOOD = 1001;

let tls: LoopbackTLS;
let documentServer: Server;
let keyServer: HttpServer;
let documentOrigin: string;
let keyOrigin: string;
/** Requests seen, per path, by either server. */
const hits = new Map<string, number>();
/** Requests to a `/hang/` path, held unanswered until the test answers them. */
const held: { path: string; answer: () => void }[] = [];
let heldChanged: () => void = () => {};

function count(path: string): void {
  hits.set(path, (hits.get(path) ?? 0) + 1);
}

/** Holds a `/hang/` request (true), to be answered with `body` when the test says. */
function hold(path: string, response: ServerResponse, body: string): boolean {
  if (!path.startsWith('/hang/')) return false;
  held.push({ path, answer: () => response.writeHead(200, { 'content-type': 'application/json' }).end(body) });
  heldChanged();
  return true;
}

/** Resolves once `n` requests are held: their fetches are under way, each holding a slot. */
function requestsHeld(n: number): Promise<void> {
  return new Promise((resolve) => {
    heldChanged = () => {
      if (held.length >= n) resolve();
    };
    heldChanged();
  });
}

function answerHeld(): void {
  for (const request of held.splice(0)) request.answer();
}

beforeAll(async () => {
  tls = loopbackTLS();
  documentServer = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    const path = request.url ?? '';
    count(path);
    const body = JSON.stringify({ client_id: `${documentOrigin}${path}`, redirect_uris: ['https://agent.example/cb'] });
    if (hold(path, response, body)) return;
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' }).end(body);
  });
  keyServer = createHttpServer((request, response) => {
    count(request.url ?? '');
    if (hold(request.url ?? '', response, JSON.stringify({ keys: [] }))) return;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [] }));
  });
  await new Promise<void>((resolve) => documentServer.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
  documentOrigin = `https://127.0.0.1:${(documentServer.address() as AddressInfo).port}`;
  keyOrigin = `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => documentServer.close(resolve));
  await new Promise((resolve) => keyServer.close(resolve));
});

function resolverFor(overrides: Partial<SentinelOptions> = {}): ClientIdMetadataResolver {
  const config = resolveConfig(
    baseOptions({
      clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true },
      // The least deadline a failure is held to (so that its timing tells nothing); the flood waits it out at once.
      clientJwks: { timeoutMs: 200 },
      ...overrides,
    }),
  );
  return new ClientIdMetadataResolver(config, { ca: tls.cert });
}

describe('failure marks and good entries', () => {
  it('a flood of failing client_id URLs does not push a good document out of the cache', async () => {
    // Enough slots for the whole flood: every URL is fetched, and fails.
    const resolver = resolverFor({
      clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true, maxConcurrentFetches: FLOOD },
    });
    const good = `${documentOrigin}/kept.json`;
    await resolver.resolve(ACCOUNT, good);
    expect(hits.get('/kept.json')).toBe(1);
    const flood = Array.from({ length: FLOOD }, (_, index) => resolver.resolve(ACCOUNT, `${CLOSED}/flood/${index}.json`));
    const outcomes = await Promise.allSettled(flood);
    expect(outcomes.every((outcome) => outcome.status === 'rejected')).toBe(true);
    await resolver.resolve(ACCOUNT, good);
    expect(hits.get('/kept.json')).toBe(1);
  });

  it('a flood of failing jwks_uris does not push a good key set out of the cache', async () => {
    const fetcher = new JwksFetcher(
      resolveConfig(baseOptions({ clientJwks: { allowPrivateAddresses: true, maxConcurrentFetches: FLOOD } })).clientJwks,
    );
    const good = `${keyOrigin}/kept-keys.json`;
    await fetcher.get(good);
    const flood = Array.from({ length: FLOOD }, (_, index) => fetcher.get(`http://127.0.0.1:1/keys/${index}.json`));
    const outcomes = await Promise.allSettled(flood);
    expect(outcomes.every((outcome) => outcome.status === 'rejected')).toBe(true);
    await fetcher.get(good);
    expect(hits.get('/kept-keys.json')).toBe(1);
  });
});

describe('how many fetches run at once', () => {
  it('refuses a document beyond maxConcurrentFetches at once as invalid_client, reports it once, remembers nothing', async () => {
    const reports: unknown[] = [];
    const resolver = resolverFor({
      clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true, maxConcurrentFetches: 2 },
      // A deadline the held fetches cannot reach while the test runs.
      clientJwks: { timeoutMs: 30_000 },
      onError: (error) => {
        reports.push(error);
      },
    });
    const running = [1, 2].map((n) => resolver.resolve(ACCOUNT, `${documentOrigin}/hang/${n}.json`));
    await requestsHeld(2);
    const third = `${documentOrigin}/third.json`;
    for (let attempt = 0; attempt < 3; attempt++) {
      await expect(resolver.resolve(ACCOUNT, third)).rejects.toMatchObject({ code: 'invalid_client', description: DOCUMENT_UNAVAILABLE });
    }
    expect(hits.get('/third.json')).toBeUndefined();
    expect(reports).toHaveLength(1);
    expect(String(reports[0])).toMatch(/2 documents are being fetched already/);
    answerHeld();
    await Promise.all(running);
    // A slot is free again, and the refusal was not kept as the URL's failure.
    await expect(resolver.resolve(ACCOUNT, third)).resolves.toMatchObject({ clientId: third });
    expect(hits.get('/third.json')).toBe(1);
  });

  it('refuses a key set beyond maxConcurrentFetches at once, with one error per spell, and remembers nothing', async () => {
    const fetcher = new JwksFetcher(
      resolveConfig(baseOptions({ clientJwks: { allowPrivateAddresses: true, maxConcurrentFetches: 2, timeoutMs: 30_000 } })).clientJwks,
    );
    const running = [1, 2].map((n) => fetcher.get(`${keyOrigin}/hang/${n}-keys.json`));
    await requestsHeld(2);
    const third = `${keyOrigin}/third-keys.json`;
    const first = await fetcher.get(third).catch((error: unknown) => error);
    expect(first).toBeInstanceOf(JwksFetchError);
    expect((first as Error).message).toMatch(/2 key sets are being fetched already/);
    // The same error while the spell lasts: a caller reporting each error once (trusted issuers) reports it once.
    await expect(fetcher.get(`${keyOrigin}/fourth-keys.json`)).rejects.toBe(first);
    expect(hits.get('/third-keys.json')).toBeUndefined();
    answerHeld();
    await Promise.all(running);
    await expect(fetcher.get(third)).resolves.toEqual({ keys: [] });
    expect(hits.get('/third-keys.json')).toBe(1);
  });
});
