/**
 * One server of the key-signing bench (bench/key-signing.ts), in its own process: sentinel.handle on bare
 * node:http, loaded from the source tree in KEYBENCH_ROOT (this checkout, or an export of the commit before the
 * key ring for the "before" row), signing as KEYBENCH_VARIANT says:
 * `static-es256` / `static-rs256` (keys option), `ring-es256` (keyRotation over a MemoryStore),
 * `pkcs11-es256` / `pkcs11-rs256` (SoftHSM2 through sentinel-idp/pkcs11; SOFTHSM2_CONF and KEYBENCH_PKCS11 given).
 * Sends {type:'ready', port} over IPC, answers {type:'cpu'} with its process.cpuUsage(); exits when the parent goes away.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { ACCOUNT_ID, CLIENT_ID, CLIENT_SECRET, HOST, issuerFor } from './fixtures.js';

const root = process.env.KEYBENCH_ROOT ?? process.cwd();
const variant = process.env.KEYBENCH_VARIANT ?? 'static-es256';
const load = (path: string) => import(pathToFileURL(`${root}/${path}`).href);
process.on('disconnect', () => process.exit(0));
setTimeout(() => process.exit(3), 300_000).unref();

const core = await load('src/index.ts');
const node = await load('adapters/node/index.ts');
const server = createServer();
await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
const port = (server.address() as { port: number }).port;

async function signing(): Promise<Record<string, unknown>> {
  if (variant === 'static-es256') return { keys: [core.generatePrivateJWK('ES256')] };
  if (variant === 'static-rs256') return { keys: [core.generatePrivateJWK('RS256')] };
  if (variant === 'ring-es256') {
    return {
      keyRotation: {
        encryptionKey: randomBytes(32).toString('base64url'),
        rotateEverySeconds: 86_400,
        prePublishSeconds: 3600,
        refreshSeconds: 30,
      },
    };
  }
  const { pkcs11Signer } = await load('src/signers/pkcs11.ts');
  const token = JSON.parse(process.env.KEYBENCH_PKCS11 as string) as { library: string; tokenLabel: string; pin: string };
  return { keys: [{ signer: pkcs11Signer({ ...token, keyLabel: variant === 'pkcs11-es256' ? 'es256' : 'rs256' }) }] };
}

const sentinel = core.createSentinel({
  issuer: issuerFor(port),
  apps: [{ accountId: ACCOUNT_ID, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [], grantTypes: ['client_credentials'] }],
  ...(await signing()),
});
if (typeof sentinel.ready === 'function') await sentinel.ready();
server.on('request', (req, res) => {
  sentinel
    .handle(node.fromNodeRequest(req, { url: req.url ?? '/', parsedBody: () => undefined }))
    .then((response: unknown) => {
      if (response === null) {
        res.writeHead(404);
        res.end();
        return;
      }
      node.writeNodeResponse(res, response);
    })
    .catch(() => {
      res.writeHead(500);
      res.end();
    });
});
// CPU time of the whole process (main thread and thread pool, where signatures run) for the parent's window.
process.on('message', (message: { type?: string }) => {
  if (message.type === 'cpu') process.send?.({ type: 'cpu', usage: process.cpuUsage() });
});
process.send?.({ type: 'ready', port });
