/**
 * The limits on what anyone can make the service fetch: client ID metadata documents (an https `client_id` is anyone's
 * to make up) and `jwks_uri` key sets. Real servers on loopback: TLS for documents (a throwaway certificate given to
 * the resolver as its trust anchor), plain http for key sets (`allowPrivateAddresses` allows it). A URL that fails is
 * one on a closed loopback port, refused at once.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientIdMetadataResolver } from '../src/apps/client-id-metadata.js';
import { JwksFetcher } from '../src/client-assertion/jwks-fetch.js';
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

function count(path: string): void {
  hits.set(path, (hits.get(path) ?? 0) + 1);
}

beforeAll(async () => {
  tls = loopbackTLS();
  documentServer = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    const path = request.url ?? '';
    count(path);
    const url = `${documentOrigin}${path}`;
    response
      .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' })
      .end(JSON.stringify({ client_id: url, redirect_uris: ['https://agent.example/cb'] }));
  });
  keyServer = createHttpServer((request, response) => {
    count(request.url ?? '');
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
    const resolver = resolverFor();
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
    const fetcher = new JwksFetcher(resolveConfig(baseOptions({ clientJwks: { allowPrivateAddresses: true } })).clientJwks);
    const good = `${keyOrigin}/kept-keys.json`;
    await fetcher.get(good);
    const flood = Array.from({ length: FLOOD }, (_, index) => fetcher.get(`http://127.0.0.1:1/keys/${index}.json`));
    const outcomes = await Promise.allSettled(flood);
    expect(outcomes.every((outcome) => outcome.status === 'rejected')).toBe(true);
    await fetcher.get(good);
    expect(hits.get('/kept-keys.json')).toBe(1);
  });
});
