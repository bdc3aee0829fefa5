/**
 * One client-credentials server for bench/postgres-apps.ts, in its own process:
 * `node --import tsx bench/postgres-apps-server.ts <memory|postgres|postgres-nocache> <port>` (database URL in
 * BENCH_DATABASE_URL). The same app, keys and node:http wiring in every mode; only the AppStore differs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fromNodeRequest, writeNodeResponse } from '../adapters/node/index.js';
import { createSentinel, generatePrivateJWK, hashClientSecret, MemoryAppStore, MemoryStore, type App } from '../src/index.js';
import { PostgresAppStore } from '../src/postgres/index.js';
import { ACCOUNT_ID, CLIENT_ID, CLIENT_SECRET, HOST, issuerFor } from './fixtures.js';
import { closeServer, listen } from './targets/util.js';

const [mode, portArg] = process.argv.slice(2);
const port = Number(portArg);
process.on('disconnect', () => process.exit(0));
setTimeout(() => process.exit(3), 300_000).unref();

/** The benchmark's app, as every mode stores it. */
export const BENCH_APP: App = {
  accountId: ACCOUNT_ID,
  clientId: CLIENT_ID,
  clientSecretHash: hashClientSecret(CLIENT_SECRET),
  redirectUris: [],
  grantTypes: ['client_credentials'],
  tokenEndpointAuthMethod: 'client_secret_basic',
};

async function main(): Promise<void> {
  const url = process.env.BENCH_DATABASE_URL ?? '';
  const appStore =
    mode === 'memory'
      ? new MemoryAppStore([BENCH_APP])
      : new PostgresAppStore({ connectionString: url, ...(mode === 'postgres-nocache' ? { cache: false } : {}) });
  const sentinel = createSentinel({
    issuer: issuerFor(port),
    keys: [generatePrivateJWK('ES256')],
    appStore,
    store: new MemoryStore({ max: 200_000 }),
  });
  const server = await listen(
    (req: IncomingMessage, res: ServerResponse) => {
      sentinel
        .handle(fromNodeRequest(req, { url: req.url ?? '/', parsedBody: () => undefined }))
        .then((response) => {
          if (response === null) {
            res.writeHead(404).end();
            return;
          }
          writeNodeResponse(res, response);
        })
        .catch(() => res.writeHead(500).end());
    },
    port,
    HOST,
  );
  process.on('message', (message: { type: string }) => {
    if (message.type !== 'close') return;
    void closeServer(server)
      .then(() => (appStore instanceof PostgresAppStore ? appStore.close() : undefined))
      .finally(() => process.exit(0));
  });
  process.send?.({ type: 'ready' });
}

main().catch((error: unknown) => {
  process.send?.({ type: 'failed', error: error instanceof Error ? error.message : String(error) });
  setTimeout(() => process.exit(2), 100);
});
