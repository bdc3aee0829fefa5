/**
 * `node --import tsx bench/verify-instructions.ts [RS256|ES256] [count]`: machine instructions of one `crypto.verify`
 * of a brand JWT's signature, counted by valgrind's callgrind. Prints one line; writes nothing that outlives it.
 *
 * Why: the brand JWT exchange's goal is set against the v2 request ("one extra verification"), and bench/instructions.ts
 * counts what the exchange adds per request. This says how much of that the verification itself is, on the same
 * machine and Node.js, so the rest (the service's own work) can be told apart from it without a profiler's sampling.
 *
 * How: the same node process is counted twice, once verifying `count` times (default 2,000) and once not at all,
 * with the same key (written to a temporary file, so key generation, whose cost is random, runs in neither); the
 * difference divided by `count` is one verification, node:crypto's per-call work included. The signed input has the
 * size of the bench's brand JWTs' (about 600 characters); each call verifies it with the key object, as
 * trusted-issuers/brand-signature.ts does.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [algArg = 'RS256', countArg = '2000'] = process.argv.slice(2);
if (algArg !== 'RS256' && algArg !== 'ES256') throw new Error('usage: verify-instructions.ts [RS256|ES256] [count]');
const count = Number(countArg);
if (!Number.isInteger(count) || count <= 0) throw new Error('count must be a positive integer');

// The loop each counted process runs: a fixed warm-up of 200 verifications, then `n` more (argv[3]).
const LOOP = `
const { createPrivateKey, createPublicKey, sign, verify } = require('node:crypto');
const { readFileSync } = require('node:fs');
const privateKey = createPrivateKey(readFileSync(process.argv[1]));
const key = createPublicKey(privateKey);
const options = process.argv[2] === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key;
const input = Buffer.alloc(600, 97);
const signature = sign('sha256', input, process.argv[2] === 'ES256' ? { key: privateKey, dsaEncoding: 'ieee-p1363' } : privateKey);
const n = Number(process.argv[3]);
for (let i = 0; i < 200 + n; i++) if (!verify('sha256', input, options, signature)) throw new Error('not verified');
`;

/** Instructions the whole process executed, from callgrind's totals line. */
function counted(dir: string, keyFile: string, n: number): number {
  const out = join(dir, `callgrind.${n}`);
  execFileSync('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`, process.execPath, '-e', LOOP, keyFile, algArg, String(n)], {
    stdio: 'ignore',
  });
  const totals = /^(?:totals|summary): (\d+)/m.exec(readFileSync(out, 'utf8'));
  if (totals === null) throw new Error('callgrind wrote no totals');
  return Number(totals[1]);
}

const dir = mkdtempSync(join(tmpdir(), 'sentinel-verify-'));
try {
  // PEM from the generation job itself: exporting the KeyObject it hands back can deadlock Node 20 (keys/signing-keys.ts).
  const publicKeyEncoding = { type: 'spki', format: 'pem' } as const;
  const privateKeyEncoding = { type: 'pkcs8', format: 'pem' } as const;
  const { privateKey } =
    algArg === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding, privateKeyEncoding })
      : generateKeyPairSync('ec', { namedCurve: 'P-256', publicKeyEncoding, privateKeyEncoding });
  const keyFile = join(dir, 'key.pem');
  writeFileSync(keyFile, privateKey);
  const without = counted(dir, keyFile, 0);
  const withLoop = counted(dir, keyFile, count);
  const perVerify = (withLoop - without) / count;
  console.log(
    `${algArg} crypto.verify: ${(perVerify / 1000).toFixed(1)} k instructions each (${count} counted, Node.js ${process.version})`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
