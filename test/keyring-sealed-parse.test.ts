/**
 * A sealed key that opens to text which is no JSON: the error names the key, never the opened text (private key
 * material), since the ring's refresh reports it to `onError`.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { importKeys } from '../src/keys/keyring/key-set.js';
import type { RingDocument } from '../src/keys/keyring/document.js';
import { seal } from '../src/keys/keyring/seal.js';

describe('key ring: a sealed key that does not open to a JWK', () => {
  it('throws an error naming the key and quoting none of the opened text', () => {
    const encryptionKey = randomBytes(32);
    const now = Date.now();
    // Short enough that V8's own JSON.parse error would quote all of it.
    const secret = 'Zk4q7w';
    const document: RingDocument = {
      v: 1,
      revision: 1,
      prePublishSeconds: 0,
      keys: [
        {
          kid: 'k-1',
          alg: 'ES256',
          createdAt: now - 1000,
          activatesAt: now - 1000,
          publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' },
          sealed: seal(encryptionKey, 'k-1', secret),
        },
      ],
    };
    let thrown: unknown;
    try {
      importKeys(document, new Map(), encryptionKey, now, 3_600_000);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    const error = thrown as Error;
    expect(`${error.message}\n${error.stack ?? ''}\n${String(error.cause ?? '')}`).not.toContain(secret);
    expect(error.message).toContain('k-1');
  });
});
