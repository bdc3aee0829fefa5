/**
 * A configured key must fit its `alg` (RFC 7518 §3.3-3.5, RFC 8037 §3.1): ES256 on P-256, ES384 on P-384, RS256 and
 * PS256 on RSA of at least 2048 bits, EdDSA on an OKP key. node:crypto signs with a key of the wrong type anyway, so
 * without the check the JWKS published {"kty":"EC","crv":"P-256","alg":"RS256"} and the tokens failed every standard
 * verifier. The refusal names the key by index and kid, never its private material.
 */
import { generateKeyPairSync, type KeyObject, sign as nodeSign } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { createSentinel, type ExternalSigner, isConfigurationError, type JWK, type SigningAlgorithm } from '../src/index.js';
import { signJWT } from '../src/keys/jws.js';
import { generatePrivateJWK, importKey, keySetOf } from '../src/keys/signing-keys.js';
import { baseOptions, SIGNING_KEY } from './helpers/fixtures.js';

function jwkOf(privateKey: KeyObject, extra: Record<string, unknown>): JWK {
  return { ...(privateKey.export({ format: 'jwk' }) as JWK), ...extra };
}

const ec = (namedCurve: string) => generateKeyPairSync('ec', { namedCurve }).privateKey;
const rsa = (modulusLength: number) => generateKeyPairSync('rsa', { modulusLength }).privateKey;

/** The thrown configuration error of `run`, or a failure when it does not throw one. */
function refusal(run: () => unknown): { field: string; message: string } {
  try {
    run();
  } catch (error) {
    if (isConfigurationError(error)) return error;
    throw error;
  }
  throw new Error('accepted');
}

describe('a configured key whose alg does not fit it', () => {
  const cases: [string, () => JWK, RegExp][] = [
    [
      'a P-384 key with alg ES256',
      () => jwkOf(ec('P-384'), { alg: 'ES256', kid: 'k384' }),
      /ES256 needs an EC key on P-256.*kid k384.*P-384/,
    ],
    [
      'a P-256 key with alg RS256',
      () => jwkOf(ec('P-256'), { alg: 'RS256' }),
      /RS256 needs an RSA key of at least 2048 bits.*EC key on P-256/,
    ],
    ['a P-256 key with alg ES384', () => jwkOf(ec('P-256'), { alg: 'ES384' }), /ES384 needs an EC key on P-384/],
    ['an RSA key with alg ES256', () => jwkOf(rsa(2048), { alg: 'ES256' }), /ES256 needs an EC key on P-256.*2048-bit RSA key/],
    ['an RSA key with alg EdDSA', () => jwkOf(rsa(2048), { alg: 'EdDSA' }), /EdDSA needs an OKP key/],
    ['an Ed25519 key with alg PS256', () => jwkOf(generateKeyPairSync('ed25519').privateKey, { alg: 'PS256' }), /PS256 needs an RSA key/],
    [
      'a 1024-bit RSA key with alg RS256',
      () => jwkOf(rsa(1024), { alg: 'RS256' }),
      /RS256 needs an RSA key of at least 2048 bits.*1024-bit/,
    ],
    ['a 1024-bit RSA key without alg', () => jwkOf(rsa(1024), {}), /RS256 needs an RSA key of at least 2048 bits/],
  ];

  it.each(cases)('refuses %s at startup, naming the key and not its material', (_name, make, message) => {
    const jwk = make();
    const error = refusal(() => createSentinel(baseOptions({ keys: [SIGNING_KEY, jwk] })));
    expect(error.field).toBe('keys[1]');
    expect(error.message).toMatch(message);
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'n', 'x', 'y']) {
      if (typeof jwk[member] === 'string') expect(error.message).not.toContain(jwk[member]);
    }
  });

  it('refuses an external signer whose alg does not fit its public key', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const signer: ExternalSigner = {
      kid: 'kms-1',
      alg: 'RS256',
      publicJwk: publicKey.export({ format: 'jwk' }) as JWK,
      sign: async (data) => nodeSign('sha256', data, privateKey),
    };
    const error = refusal(() => createSentinel(baseOptions({ keys: [{ signer }] })));
    expect(error.field).toBe('keys[0].signer');
    expect(error.message).toMatch(/RS256 needs an RSA key of at least 2048 bits, and this key \(kid kms-1\) is an EC key on P-256/);
  });
});

describe('keys that fit their alg', () => {
  it.each(['ES256', 'ES384', 'RS256', 'PS256', 'EdDSA'] as SigningAlgorithm[])(
    'a generated %s key signs tokens jose verifies',
    async (alg) => {
      const set = keySetOf([importKey(generatePrivateJWK(alg), 'keys[0]')], 'keys');
      const token = await signJWT(set, 'at+jwt', { iss: 'https://id.example.com', exp: Math.floor(Date.now() / 1000) + 60 });
      const { protectedHeader } = await jwtVerify(token, createLocalJWKSet(set.jwks as never));
      expect(protectedHeader.alg).toBe(alg);
    },
  );

  it('infers the alg of a key without one, and accepts an Ed448 key for EdDSA', () => {
    expect(importKey(jwkOf(ec('P-384'), {}), 'keys[0]').alg).toBe('ES384');
    expect(importKey(jwkOf(rsa(2048), {}), 'keys[0]').alg).toBe('RS256');
    expect(importKey(jwkOf(generateKeyPairSync('ed448').privateKey, { alg: 'EdDSA' }), 'keys[0]').alg).toBe('EdDSA');
  });

  it('still starts without keys, on the temporary keys it generates', () => {
    const sentinel = createSentinel({ ...baseOptions({ keys: undefined }), logger: { warn: () => {} } });
    expect(sentinel.jwks().keys.map((key) => key.alg)).toEqual(['ES256', 'RS256']);
  });
});
