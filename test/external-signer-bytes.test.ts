/**
 * What an external signer's `sign` may answer: a Uint8Array of another realm (a `vm` context, a worker's
 * transferred buffer), a Buffer, an ArrayBuffer (WebCrypto's `subtle.sign`) or a DataView all carry the signature's
 * bytes and issue tokens that verify; a string or another value is refused with 500 and nothing issued.
 */
import { generateKeyPairSync, sign as nodeSign } from 'node:crypto';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { ExternalSigner, JWK } from '../src/index.js';
import { call } from './helpers/direct-flow.js';
import { ACCOUNT, appTokenPath, basic, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });

function signerAnswering(wrap: (signature: Buffer) => unknown): ExternalSigner {
  return {
    kid: 'kms-bytes',
    alg: 'ES256',
    publicJwk: ec.publicKey.export({ format: 'jwk' }) as JWK,
    sign: async (data) => wrap(nodeSign('sha256', data, { key: ec.privateKey, dsaEncoding: 'ieee-p1363' })) as Uint8Array,
  };
}

async function issue(signer: ExternalSigner) {
  const errors: unknown[] = [];
  const sentinel = makeSentinel({ keys: [{ signer }], onError: (error) => errors.push(error) });
  const response = await call(sentinel, {
    method: 'POST',
    path: appTokenPath(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    body: 'grant_type=client_credentials',
  });
  return { sentinel, errors, status: response.status, body: JSON.parse(response.body as string) as { access_token?: string } };
}

/** The signature's bytes in a Uint8Array made in another realm, as a `vm` context or a worker would hand it over. */
function otherRealm(signature: Buffer): unknown {
  const foreign = runInNewContext(
    '(bytes) => { const out = new Uint8Array(bytes.length); for (let i = 0; i < bytes.length; i++) out[i] = bytes[i]; return out; }',
  )([...signature]);
  expect(foreign instanceof Uint8Array).toBe(false);
  return foreign;
}

describe('external signers answering any kind of bytes', () => {
  it.each([
    ['a Uint8Array of another realm', otherRealm],
    ['an ArrayBuffer of another realm', (signature: Buffer) => (otherRealm(signature) as Uint8Array).buffer],
    ['a Buffer', (signature: Buffer) => signature],
    ['an ArrayBuffer', (signature: Buffer) => new Uint8Array(signature).buffer],
    [
      'a DataView over part of a larger buffer',
      (signature: Buffer) => {
        const larger = new Uint8Array(signature.length + 8);
        larger.set(signature, 4);
        return new DataView(larger.buffer, 4, signature.length);
      },
    ],
  ] as const)('%s issues a token that verifies', async (_name, wrap) => {
    const { sentinel, errors, status, body } = await issue(signerAnswering(wrap));
    expect(errors).toEqual([]);
    expect(status).toBe(200);
    const token = body.access_token as string;
    expect((await sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID })).ok).toBe(true);
  });

  it.each([
    ['a base64url string', (signature: Buffer) => signature.toString('base64url')],
    ['an array of numbers', (signature: Buffer) => [...signature]],
    ['an empty Uint8Array', () => new Uint8Array(0)],
    ['undefined', () => undefined],
  ] as const)('%s is refused: 500 server_error, no token', async (_name, wrap) => {
    const { errors, status, body } = await issue(signerAnswering(wrap));
    expect(status).toBe(500);
    expect(body.access_token).toBeUndefined();
    expect(errors).toHaveLength(1);
  });
});
