import { describe, expect, it } from 'vitest';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { generatePrivateJWK } from '../src/index.js';
import { signJWT, verifyJWT } from '../src/keys/jws.js';
import { loadKeys } from '../src/keys/signing-keys.js';

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
