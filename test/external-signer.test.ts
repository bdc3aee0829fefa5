/**
 * External signers (`keys: [{ signer }]`) as a cloud KMS would plug in: the private key lives elsewhere (here a
 * KeyObject the service never sees), `sign` is async, and ECDSA may come back in DER (KMS APIs) or r||s.
 */
import { generateKeyPairSync, sign as nodeSign } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { type ExternalSigner, isConfigurationError, type JWK } from '../src/index.js';
import { generatePrivateJWK } from '../src/keys/signing-keys.js';
import { ecdsaDerToJose } from '../src/keys/signers/ecdsa-der.js';
import { throttleKeys } from '../src/authorize/state/throttle.js';
import { contextOf } from '../src/http/context.js';
import { digest } from '../src/lib/random-secrets.js';
import { call } from './helpers/direct-flow.js';
import { ACCOUNT, appTokenPath, basic, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';

function kmsLike(encoding: 'der' | 'ieee-p1363'): ExternalSigner & { calls: number } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const signer = {
    kid: `kms-${encoding}`,
    alg: 'ES256' as const,
    publicJwk: publicKey.export({ format: 'jwk' }) as JWK,
    calls: 0,
    async sign(data: Uint8Array): Promise<Uint8Array> {
      signer.calls += 1;
      return nodeSign('sha256', data, { key: privateKey, dsaEncoding: encoding });
    },
  };
  return signer;
}

async function issue(signer: ExternalSigner, onError?: (error: unknown) => void) {
  const sentinel = makeSentinel({ keys: [{ signer }], ...(onError === undefined ? {} : { onError }) });
  const response = await call(sentinel, {
    method: 'POST',
    path: appTokenPath(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    body: 'grant_type=client_credentials',
  });
  return { sentinel, status: response.status, body: JSON.parse(response.body as string) as { access_token?: string } };
}

describe('external signers', () => {
  it.each(['der', 'ieee-p1363'] as const)(
    'a KMS-like signer answering %s issues tokens that verify with jose and the guard',
    async (encoding) => {
      const signer = kmsLike(encoding);
      const { sentinel, status, body } = await issue(signer);
      expect(status).toBe(200);
      expect(signer.calls).toBe(1);
      const token = body.access_token as string;
      const { protectedHeader } = await jwtVerify(token, createLocalJWKSet(sentinel.jwks()), { algorithms: ['ES256'] });
      expect(protectedHeader.kid).toBe(signer.kid);
      expect((await sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID })).ok).toBe(true);
    },
  );

  it.each([
    ['ed25519', 64],
    ['ed448', 114],
  ] as const)(
    'an EdDSA signer on %s issues tokens that verify with the guard (its %d-byte signatures are JWS form)',
    async (curve, size) => {
      const { privateKey, publicKey } = generateKeyPairSync(curve as 'ed25519');
      const signer: ExternalSigner = {
        kid: `kms-${curve}`,
        alg: 'EdDSA',
        publicJwk: publicKey.export({ format: 'jwk' }) as JWK,
        sign: async (data) => nodeSign(null, data, privateKey),
      };
      const { sentinel, status, body } = await issue(signer);
      expect(status).toBe(200);
      const token = body.access_token as string;
      expect(Buffer.from(token.split('.')[2] as string, 'base64url')).toHaveLength(size);
      expect((await sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID })).ok).toBe(true);
    },
  );

  it('a signer returning garbage or rejecting yields 500 server_error and no token', async () => {
    for (const sign of [async () => new Uint8Array(10), async () => Promise.reject(new Error('KMS throttled'))]) {
      const errors: unknown[] = [];
      const { status, body } = await issue({ ...kmsLike('der'), sign }, (error) => errors.push(error));
      expect(status).toBe(500);
      expect(body.access_token).toBeUndefined();
      expect(errors).toHaveLength(1);
    }
  });

  it('a signature the published key does not verify (another key, or RSA bytes of any length) yields 500 and no token', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const swapped = {
      ...kmsLike('ieee-p1363'),
      sign: async (data: Uint8Array) => nodeSign('sha256', data, { key: other.privateKey, dsaEncoding: 'ieee-p1363' }),
    };
    const short: ExternalSigner = {
      kid: 'kms-rsa',
      alg: 'RS256',
      publicJwk: rsa.publicKey.export({ format: 'jwk' }) as JWK,
      sign: async () => new Uint8Array(10),
    };
    for (const signer of [swapped, short]) {
      const errors: unknown[] = [];
      const { status, body } = await issue(signer, (error) => errors.push(error));
      expect(status).toBe(500);
      expect(body.access_token).toBeUndefined();
      expect(errors).toHaveLength(1);
      expect(String(errors[0])).toMatch(/does not verify/);
    }
  });

  it('refuses a private JWK as publicJwk and a signer without sign()', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const privateJwk = privateKey.export({ format: 'jwk' }) as JWK;
    expect(() => makeSentinel({ keys: [{ signer: { ...kmsLike('der'), publicJwk: privateJwk } }] })).toThrow(/publicJwk/);
    expect(() =>
      makeSentinel({ keys: [{ signer: { kid: 'x', alg: 'ES256', publicJwk: privateJwk } as unknown as ExternalSigner }] }),
    ).toThrow(/keys\[0\]\.signer/);
  });

  it("with only external signers, typed usernames are still digested under a key (the store's), with nothing to warn", async () => {
    const warnings: string[] = [];
    const logger = { warn: (message: string) => warnings.push(message) };
    const sentinel = makeSentinel({ keys: [{ signer: kmsLike('der') }], logger });
    expect(warnings.filter((message) => message.includes('throttle.digestKey'))).toEqual([]);
    const keys = await throttleKeys(contextOf(sentinel), ACCOUNT, 'alice', null);
    expect(keys.username).not.toBe(`throttle-user:${digest(`${ACCOUNT}\u0000alice`)}`);
  });

  it('refuses dpop.nonce at startup when an external signer signs first and there is no keyRotation', () => {
    let refusal: unknown;
    try {
      makeSentinel({ keys: [{ signer: kmsLike('der') }], dpop: { nonce: true } });
    } catch (error) {
      refusal = error;
    }
    // The nonces are an HMAC keyed from the signing key's private part, which an external signer never hands over.
    expect(isConfigurationError(refusal) && refusal.field).toBe('dpop.nonce');
    expect(String(refusal)).toMatch(/keyRotation/);
    // A private key first signs and keys the nonces; an external signer may follow it.
    expect(() => makeSentinel({ keys: [generatePrivateJWK('ES256'), { signer: kmsLike('der') }], dpop: { nonce: true } })).not.toThrow();
  });

  it('ecdsaDerToJose handles short r/s and refuses non-DER', () => {
    const der = Uint8Array.from([0x30, 0x06, 0x02, 0x01, 0x05, 0x02, 0x01, 0x07]);
    const jose = ecdsaDerToJose(der, 32) as Uint8Array;
    expect(jose).toHaveLength(64);
    expect(jose[31]).toBe(5);
    expect(jose[63]).toBe(7);
    expect(ecdsaDerToJose(Uint8Array.from([1, 2, 3]), 32)).toBeNull();
  });
});
