/**
 * An ES256/ES384 external signer answering DER whose length happens to be the raw `r||s` length (64 or 96 bytes:
 * r and s short enough) is converted and verified, not refused. A real signature of that length takes a search of
 * about 2^56 signatures, so the answer is built from random short r and s and the check is a verifier accepting
 * exactly their JWS form: what the real verifier does for a real signature.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { importExternal } from '../src/keys/external-signer-key.js';
import type { JWK, SigningAlgorithm } from '../src/keys/key-types.js';
import { ecdsaDerToJose } from '../src/keys/signers/ecdsa-der.js';

/** A DER signature of exactly `total` bytes: two INTEGERs of equal length, without a leading zero (high bit clear). */
function derOfLength(total: number): Uint8Array {
  const each = (total - 6) / 2;
  const integer = () => {
    const bytes = randomBytes(each);
    bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
    return [0x02, each, ...bytes];
  };
  return Uint8Array.from([0x30, total - 2, ...integer(), ...integer()]);
}

describe('an external ECDSA signer answering DER of the raw length', () => {
  it.each([
    ['ES256', 'P-256', 64],
    ['ES384', 'P-384', 96],
  ] as const)('%s: a %s DER answer is converted and verified, not refused', async (alg, curve, raw) => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: curve });
    const der = derOfLength(raw);
    expect(der.length).toBe(raw);
    const jose = ecdsaDerToJose(der, raw / 2) as Uint8Array;
    const verified: Buffer[] = [];
    const key = importExternal(
      { kid: 'kms-der', alg: alg as SigningAlgorithm, publicJwk: publicKey.export({ format: 'jwk' }) as JWK, sign: async () => der },
      'keys[0]',
      5000,
      async (_key, _data, signature) => {
        verified.push(signature);
        return signature.equals(jose);
      },
    );
    const signature = await key.external?.sign(new Uint8Array([1, 2, 3]));
    expect(Buffer.from(signature as Uint8Array).equals(Buffer.from(jose))).toBe(true);
    // The raw reading is tried first: a raw r||s that happens to parse as DER still signs as it is.
    expect(verified.length).toBe(2);
  });

  it('an answer that verifies neither as raw nor as DER is still refused', async () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const der = derOfLength(64);
    const key = importExternal(
      { kid: 'kms-der', alg: 'ES256', publicJwk: publicKey.export({ format: 'jwk' }) as JWK, sign: async () => der },
      'keys[0]',
      5000,
      async () => false,
    );
    await expect(key.external?.sign(new Uint8Array([1]))).rejects.toThrow(/does not verify/);
  });
});
