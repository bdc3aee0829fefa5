/**
 * Two sentinel-idp instances sharing one Redis, behind a round-robin proxy, started by one command:
 *
 *   node --import tsx examples/multi-instance/start.ts
 *
 * It expects a Redis at REDIS_URL (default redis://127.0.0.1:6379). It generates the secrets every instance must
 * share (the signing key, the demo app's client id and secret, the demo password) once, hands the same values to
 * both children through their environment, and prints where to go. PORT (default 4000) is the proxy's port; the
 * instances listen on the next two ports, on 127.0.0.1 only, so that the proxy is the only way in.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { generateClientSecret, generatePrivateJWK } from 'sentinel-idp';
import { DEMO_CONSUMERS } from '../shared/brand-tokens.js';
import { createRoundRobinProxy } from './proxy.js';
import { ACCOUNT_ID } from './account.js';

const proxyPort = Number(process.env.PORT ?? 4000);
const instancePorts = [proxyPort + 1, proxyPort + 2];
const issuer = (process.env.ISSUER ?? `http://localhost:${proxyPort}`).replace(/\/+$/, '');
const shared = {
  ISSUER: issuer,
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  REDIS_PREFIX: process.env.REDIS_PREFIX ?? 'sentinel-demo:',
  // In production these come from your secret manager, the same for every instance; here they live as long as this run.
  // ES256 signs access tokens; RS256 signs ID tokens, the one algorithm every OpenID Connect client must support.
  SENTINEL_KEYS: process.env.SENTINEL_KEYS ?? JSON.stringify([generatePrivateJWK('ES256'), generatePrivateJWK('RS256')]),
  SENTINEL_CLIENT_ID: process.env.SENTINEL_CLIENT_ID ?? randomUUID(),
  SENTINEL_CLIENT_SECRET: process.env.SENTINEL_CLIENT_SECRET ?? generateClientSecret(),
  DEMO_PASSWORD: process.env.DEMO_PASSWORD ?? randomBytes(9).toString('base64url'),
};

const serverPath = fileURLToPath(new URL('./server.ts', import.meta.url));
const children: ChildProcess[] = [];
let stopping = false;

function startInstance(name: string, port: number): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', serverPath], {
    env: { ...process.env, ...shared, INSTANCE: name, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      output += chunk.toString();
      if (output.includes('listening on')) resolve();
    });
    child.once('exit', (code, signal) => {
      reject(new Error(`instance ${name} exited (${signal ?? code})`));
      if (!stopping) {
        console.error(`instance ${name} stopped (${signal ?? code}); shutting down the example`);
        stop(1);
      }
    });
  });
}

function stop(exitCode: number): void {
  if (stopping) return;
  stopping = true;
  proxy.close();
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  // Also the code of a natural exit: once the children are gone, nothing may keep the process up until the timer.
  process.exitCode = exitCode;
  setTimeout(() => process.exit(exitCode), 500).unref();
}

const proxy = createRoundRobinProxy({ upstreams: instancePorts.map((port) => `http://127.0.0.1:${port}`) });
process.once('SIGINT', () => stop(0));
process.once('SIGTERM', () => stop(0));

try {
  await Promise.all([startInstance('A', instancePorts[0] as number), startInstance('B', instancePorts[1] as number)]);
} catch (error) {
  // An instance that stopped said so in its exit handler, and a Ctrl-C during the start needs no message.
  if (!stopping) console.error(error instanceof Error ? error.message : error);
  stop(1);
}
// Stopping: no proxy and no banner, which would announce instances that are gone, with credentials nothing serves.
if (!stopping) {
  proxy.once('error', (error) => {
    console.error(`the proxy cannot listen on 127.0.0.1:${proxyPort}: ${error.message}`);
    stop(1);
  });
  await new Promise<void>((resolve) => proxy.listen(proxyPort, '127.0.0.1', resolve));
  printBanner();
}

function printBanner(): void {
  const base = `${issuer}/sentinel`;
  const consumer = DEMO_CONSUMERS[0];
  console.log(
    [
      '',
      `sentinel-idp multi-instance example: proxy ${issuer} → instances A http://127.0.0.1:${instancePorts[0]}, B http://127.0.0.1:${instancePorts[1]}`,
      `shared store: Redis ${shared.REDIS_URL} under the prefix "${shared.REDIS_PREFIX}"`,
      '',
      `  account        ${ACCOUNT_ID}`,
      `  client id      ${shared.SENTINEL_CLIENT_ID}`,
      `  client secret  ${shared.SENTINEL_CLIENT_SECRET}`,
      `  demo user      demo / ${shared.DEMO_PASSWORD}`,
      '',
      `Sign in (every step may land on another instance; the x-instance response header says which): ${issuer}/`,
      '',
      'A consumer-bound token from one instance, used at the other:',
      `  TOKEN=$(curl -s -X POST '${base}/api/v2/account/${ACCOUNT_ID}/app/token?state=${consumer}' \\`,
      `    --data-urlencode 'grant_type=client_credentials' \\`,
      `    --data-urlencode 'client_id=${shared.SENTINEL_CLIENT_ID}' \\`,
      `    --data-urlencode 'client_secret=${shared.SENTINEL_CLIENT_SECRET}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')`,
      `  curl -si '${issuer}/api/account/${ACCOUNT_ID}/consumer/${consumer}/brand/tokens' -H "Authorization: Bearer $TOKEN"`,
      '',
    ].join('\n'),
  );
}
