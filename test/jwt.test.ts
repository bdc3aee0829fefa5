import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { generatePrivateJWK } from '../src/index.js';
import { signJWT, verifyJWT, verifyJWTIn } from '../src/keys/jws.js';
import { loadKeys } from '../src/keys/signing-keys.js';
import { isCanonicalBase64url } from '../src/lib/compact-jwt.js';

const noWarn = (): void => {};

describe('sync JWS', () => {
  it.each([
    ['ES256', 'sync'],
    ['ES256', 'threadpool'],
    ['ES384', 'threadpool'],
    ['RS256', 'threadpool'],
    ['PS256', 'sync'],
    ['PS256', 'threadpool'],
    ['EdDSA', 'sync'],
    ['EdDSA', 'threadpool'],
  ] as const)('%s tokens signed %s verify with jose and with verifyJWT', async (alg, mode) => {
    const keys = loadKeys([generatePrivateJWK(alg)], noWarn);
    const now = Math.floor(Date.now() / 1000);
    const token = await signJWT(keys, 'at+jwt', { iss: 'https://i', sub: 's', exp: now + 60, iat: now }, mode);
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(keys.jwks), { issuer: 'https://i', typ: 'at+jwt' });
    expect(payload.sub).toBe('s');
    expect(protectedHeader.alg).toBe(alg);
    expect(verifyJWT(keys, token, { typ: 'at+jwt', issuer: (iss) => iss === 'https://i' }).sub).toBe('s');
  });

  it('refuses a token whose header alg differs from the key (algorithm confusion)', async () => {
    const keys = loadKeys([generatePrivateJWK('ES256')], noWarn);
    const now = Math.floor(Date.now() / 1000);
    const token = await signJWT(keys, 'at+jwt', { iss: 'https://i', exp: now + 60 });
    const [, payload, signature] = token.split('.');
    const forged = `${Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'at+jwt', kid: keys.signer.kid })).toString('base64url')}.${payload}.${signature}`;
    expect(() => verifyJWT(keys, forged, { typ: 'at+jwt', issuer: () => true })).toThrow(/not signed by this service/);
  });

  it('a rotated-out key still verifies the tokens it signed while it is published', async () => {
    const old = generatePrivateJWK('ES256');
    const before = loadKeys([old], noWarn);
    const now = Math.floor(Date.now() / 1000);
    const token = await signJWT(before, 'at+jwt', { iss: 'https://i', exp: now + 60 });
    const after = loadKeys([generatePrivateJWK('ES256'), old], noWarn);
    expect(after.signer.kid).not.toBe(old.kid);
    expect(verifyJWT(after, token, { typ: 'at+jwt', issuer: () => true }).iss).toBe('https://i');
    const dropped = loadKeys([generatePrivateJWK('ES256')], noWarn);
    expect(() => verifyJWT(dropped, token, { typ: 'at+jwt', issuer: () => true })).toThrow();
  });
});

/** The alphabet of base64url, in the order of the values its characters stand for. */
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * The token with its signature spelled otherwise, though Node's decoder reads the same bytes from it: one character
 * appended to a signature of 4n characters (a length base64 never has: the decoder drops it), or the unused low bit
 * of the last character set (RFC 4648 §3.5 asks it to be zero; the decoder ignores it).
 */
function respelled(token: string): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const other =
    signature.length % 4 === 0 ? `${signature}A` : `${signature.slice(0, -1)}${BASE64URL[BASE64URL.indexOf(signature.slice(-1)) | 1]}`;
  expect(other).not.toBe(signature);
  expect(Buffer.from(other, 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(true);
  return `${header}.${payload}.${other}`;
}

describe('JWS signature spelling (RFC 7515 §2)', () => {
  it('takes the encoding of any bytes, and no other spelling that decodes to them', () => {
    expect(isCanonicalBase64url('')).toBe(true);
    for (let length = 1; length <= 7; length += 1) {
      const bytes = randomBytes(length);
      const canonical = bytes.toString('base64url');
      expect(isCanonicalBase64url(canonical)).toBe(true);
      const last = BASE64URL.indexOf(canonical.slice(-1));
      const others = [`${canonical}=`, `${canonical} `, `${canonical.slice(0, 1)}!${canonical.slice(1)}`];
      // One character more than 4n, or every value but zero of the spare low bits of the last character (four bits
      // after one byte, two after two).
      const spare = [0, 0, 16, 4][canonical.length % 4] ?? 0;
      if (spare === 0) others.push(`${canonical}A`);
      for (let bits = 1; bits < spare; bits += 1) others.push(`${canonical.slice(0, -1)}${BASE64URL[last | bits]}`);
      for (const other of others) {
        expect(Buffer.from(other, 'base64url').equals(bytes)).toBe(true);
        expect(isCanonicalBase64url(other)).toBe(false);
      }
    }
  });

  // ES384: 96 bytes, 128 characters (4n: one appended is dropped). ES256, EdDSA: 64 bytes, RS256: 256 bytes, in
  // 86 and 342 characters whose last carries four unused bits.
  it.each(['ES256', 'ES384', 'RS256', 'EdDSA'] as const)(
    'refuses a %s token whose signature is spelled otherwise, though it decodes to the one that verifies',
    async (alg) => {
      const keys = loadKeys([generatePrivateJWK(alg)], noWarn);
      const now = Math.floor(Date.now() / 1000);
      const token = await signJWT(keys, 'at+jwt', { iss: 'https://i', sub: 's', exp: now + 60, iat: now });
      const options = { typ: 'at+jwt', issuer: (iss: string) => iss === 'https://i' } as const;
      const other = respelled(token);
      expect(() => verifyJWT(keys, other, options)).toThrow(/the token is malformed/);
      for (const mode of ['sync', 'threadpool'] as const) {
        await expect(verifyJWTIn(mode, keys, other, options)).rejects.toThrow(/the token is malformed/);
        expect((await verifyJWTIn(mode, keys, token, options)).claims.sub).toBe('s');
      }
      expect(verifyJWT(keys, token, options).sub).toBe('s');
    },
  );
});
