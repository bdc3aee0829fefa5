/**
 * A client ID metadata document served over https on loopback, and a service that resolves it: the resolver is
 * given the test's certificate as its trust anchor (the service's own has none), so the tests of what the service
 * does with such clients reach a real document over a real TLS connection.
 */
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { ClientIdMetadataResolver } from '../../src/apps/client-id-metadata.js';
import { MemoryAppStore } from '../../src/apps/memory-app-store.js';
import { withClientIdMetadataDocuments } from '../../src/apps/resolving-app-store.js';
import { contextOf } from '../../src/http/context.js';
import { createSentinel, type Sentinel, type SentinelOptions } from '../../src/index.js';
import { baseOptions } from './fixtures.js';
import { loopbackTLS } from './loopback-tls.js';

/** A served document: its URL (the client id), the certificate's PEM, and how to stop serving it. */
export interface ServedDocument {
  url: string;
  cert: string;
  close(): Promise<void>;
}

/**
 * Serves one document at `https://127.0.0.1:{port}/agent.json`, naming `clientName` and `redirectUris`.
 * @example const document = await serveMetadataDocument('Your Bank', ['https://phish.example/landing']);
 */
export async function serveMetadataDocument(clientName: string, redirectUris: string[]): Promise<ServedDocument> {
  const tls = loopbackTLS();
  let url = '';
  const server = createServer({ key: tls.key, cert: tls.cert }, (_request, response) => {
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ client_id: url, client_name: clientName, redirect_uris: redirectUris }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/agent.json`;
  return { url, cert: tls.cert, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * A service with the fixtures' apps and client ID metadata documents on, whose resolver trusts `document`'s
 * certificate. Built without the option so that it does not wrap the store again; its config says documents are on,
 * as the service's own would.
 * @example const sentinel = serviceWithDocuments(document, { onEvent: (event) => events.push(event) });
 */
export function serviceWithDocuments(document: Pick<ServedDocument, 'cert'>, overrides: Partial<SentinelOptions> = {}): Sentinel {
  const options = baseOptions({ clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true }, ...overrides });
  const appStore = withClientIdMetadataDocuments(
    new MemoryAppStore(createSentinel(options).config.apps),
    new ClientIdMetadataResolver(createSentinel(options).config, { ca: document.cert }),
  );
  const { clientIdMetadataDocuments: _documents, ...rest } = options;
  const sentinel = createSentinel({ ...rest, apps: [], appStore });
  (contextOf(sentinel).config.clientIdMetadataDocuments as { enabled: boolean }).enabled = true;
  return sentinel;
}
