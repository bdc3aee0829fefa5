/**
 * Generating a signing key never hangs the process. On Node 20, exporting a KeyObject that `generateKeyPair(Sync)`
 * handed back deadlocks now and then: a garbage collection during the export finalizes the spent generation job,
 * whose destructor waits for the lock the export holds. It hung one `sentinel-idp config check` in 30 to 100 (the
 * temporary keys of options without `keys`), and could hang a running service when its key ring rotates. The keys
 * now come out of the generation job already exported, on the main thread and the thread pool alike. Before the
 * fix, most of the first test's four children hung, in each of two runs.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { calculateJwkThumbprint } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SigningAlgorithm } from '../src/keys/key-types.js';
import { generatePrivateJWK, generatePrivateJWKInPool } from '../src/keys/signing-keys.js';
import { ensureBuilt, ROOT } from './helpers/dist.js';

const KEYS_PER_CHILD = 40_000;

/** What a child generating keys through the built package printed, or that it did not finish within `timeoutMs`. */
function generateInChild(timeoutMs: number): Promise<string> {
  const args = [join(ROOT, 'test/helpers/generate-keys-under-gc.cjs'), join(ROOT, 'dist/index.cjs'), String(KEYS_PER_CHILD)];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { timeout: timeoutMs, killSignal: 'SIGKILL' }, (error, stdout) => {
      resolve(error === null ? stdout.trim() : error.killed ? `hung past ${timeoutMs} ms` : `failed: ${error.message}`);
    });
  });
}

beforeAll(() => ensureBuilt(), 180_000);

describe('signing key generation', () => {
  it('finishes every generation while garbage is collected at varied points', async () => {
    const runs = await Promise.all(Array.from({ length: 4 }, () => generateInChild(100_000)));
    expect(runs).toEqual(Array(4).fill(`${KEYS_PER_CHILD} of ${KEYS_PER_CHILD}`));
  }, 120_000);

  it('gives each algorithm a private JWK of its kind, with the RFC 7638 thumbprint of its public half as kid', async () => {
    const kinds: Record<SigningAlgorithm, Record<string, string>> = {
      ES256: { kty: 'EC', crv: 'P-256' },
      ES384: { kty: 'EC', crv: 'P-384' },
      RS256: { kty: 'RSA' },
      PS256: { kty: 'RSA' },
      EdDSA: { kty: 'OKP', crv: 'Ed25519' },
    };
    for (const [alg, kind] of Object.entries(kinds) as [SigningAlgorithm, Record<string, string>][]) {
      for (const jwk of [generatePrivateJWK(alg), await generatePrivateJWKInPool(alg)]) {
        expect(jwk).toMatchObject({ ...kind, alg });
        expect(typeof jwk.d).toBe('string');
        // The thumbprint takes only the required public members (RFC 7638 §3.2), whatever else the JWK holds.
        expect(jwk.kid).toBe(await calculateJwkThumbprint(jwk as never));
      }
    }
  }, 60_000);
});
