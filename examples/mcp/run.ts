/**
 * `npm run example:mcp`: makes a throwaway certificate for https://127.0.0.1 (the agent's client ID metadata document
 * must be https: the MCP SDK insists, and so does the service), then runs the demo in a process that trusts it
 * (NODE_EXTRA_CA_CERTS is read only when Node starts). Nothing is trusted beyond that one process.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = mkdtempSync(join(tmpdir(), 'sentinel-mcp-'));
const key = join(dir, 'key.pem');
const cert = join(dir, 'cert.pem');
execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  ],
  { stdio: 'ignore' },
);
const demo = fileURLToPath(new URL('./demo.ts', import.meta.url));
const result = spawnSync(process.execPath, ['--import', 'tsx', demo, ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, NODE_EXTRA_CA_CERTS: cert, MCP_EXAMPLE_TLS_KEY: key },
});
rmSync(dir, { recursive: true, force: true });
process.exitCode = result.status ?? 1;
