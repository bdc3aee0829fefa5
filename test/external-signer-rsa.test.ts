/**
 * RSA external signers whose library drops the signature's leading zero bytes (RFC 8017 I2OSP makes it the modulus
 * length, k octets; one signature in 256 starts with 0x00): the service restores the k-octet JWS form (RFC 7518
 * §3.3) instead of answering 500, and still refuses a signature longer than the modulus.
 */
import { generateKeyPairSync, sign as nodeSign, verify as nodeVerify, constants } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import type { ExternalSigner, JWK } from '../src/index.js';
import { importKey } from '../src/keys/signing-keys.js';
import { call } from './helpers/direct-flow.js';
import { ACCOUNT, appTokenPath, basic, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicJwk = rsa.publicKey.export({ format: 'jwk' }) as JWK;
const PSS = { key: rsa.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 };

/** Strips the leading zero bytes, as the minimal-integer encodings of some KMS/HSM libraries do. */
function stripped(signature: Uint8Array): Uint8Array {
  let start = 0;
  while (start < signature.length && signature[start] === 0) start += 1;
  return signature.subarray(start);
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

describe('RSA external signers answering without leading zero bytes', () => {
  it('a PS256 signature shorter than the modulus is padded and the token verifies with jose and the guard', async () => {
    let shortened = 0;
    const signer: ExternalSigner = {
      kid: 'kms-ps256',
      alg: 'PS256',
      publicJwk,
      async sign(data) {
        // PSS is randomised: sign until the signature starts with a zero byte (one in 256), then drop it.
        for (;;) {
          const signature = nodeSign('sha256', data, PSS);
          if (signature[0] === 0) {
            shortened += 1;
            return stripped(signature);
          }
        }
      },
    };
    const errors: unknown[] = [];
    const { sentinel, status, body } = await issue(signer, (error) => errors.push(error));
    expect(errors).toEqual([]);
    expect(status).toBe(200);
    expect(shortened).toBe(1);
    const token = body.access_token as string;
    expect(Buffer.from(token.split('.')[2] as string, 'base64url')).toHaveLength(256);
    await jwtVerify(token, createLocalJWKSet(sentinel.jwks()), { algorithms: ['PS256'] });
    expect((await sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID })).ok).toBe(true);
  });

  it('an RS256 signature shorter than the modulus comes back as the 256-octet signature that verifies', async () => {
    // RS256 is deterministic: find an input whose signature starts with a zero byte.
    let data = Buffer.alloc(0);
    let full = Buffer.alloc(0);
    for (let i = 0; full[0] !== 0; i += 1) {
      data = Buffer.from(`input-${i}`);
      full = nodeSign('sha256', data, rsa.privateKey);
    }
    const key = importKey(
      { signer: { kid: 'kms-rs256', alg: 'RS256', publicJwk, sign: async (d) => stripped(nodeSign('sha256', d, rsa.privateKey)) } },
      'keys[0]',
    );
    const signature = await key.external?.sign(data);
    expect(Buffer.from(signature as Uint8Array).equals(full)).toBe(true);
    expect(nodeVerify('sha256', data, rsa.publicKey, Buffer.from(signature as Uint8Array))).toBe(true);
  });

  it('a signature longer than the modulus is refused: 500, no token', async () => {
    const signer: ExternalSigner = {
      kid: 'kms-long',
      alg: 'RS256',
      publicJwk,
      sign: async (data) => Buffer.concat([Buffer.from([0]), nodeSign('sha256', data, rsa.privateKey)]),
    };
    const errors: unknown[] = [];
    const { status, body } = await issue(signer, (error) => errors.push(error));
    expect(status).toBe(500);
    expect(body.access_token).toBeUndefined();
    expect(String(errors[0])).toMatch(/not in JWS form/);
  });
});
