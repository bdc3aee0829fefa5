/**
 * Units of the DPoP checks: the synchronous signature check agrees with jose for every allowed algorithm and
 * refuses a key that does not fit the algorithm (algorithm confusion) or a tampered proof; the resource URL a proof
 * must name is rebuilt from Host, and from X-Forwarded-* only behind a trusted proxy.
 */
import { generateKeyPairSync } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { verifyProofSignature } from '../src/dpop/proof-signature.js';
import { contextOf } from '../src/http/context.js';

async function signed(alg: string, options: Record<string, unknown> = {}) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, ...options });
  const jwk = (await exportJWK(publicKey)) as Record<string, unknown>;
  const proof = await new SignJWT({ htm: 'GET', jti: 'x' }).setProtectedHeader({ alg, typ: 'dpop+jwt', jwk } as never).sign(privateKey);
  return { proof, jwk };
}

describe('verifyProofSignature', () => {
  it.each(['ES256', 'ES384', 'EdDSA', 'RS256', 'PS256'])('verifies %s proofs signed by jose', async (alg) => {
    const { proof, jwk } = await signed(alg, alg === 'EdDSA' ? { crv: 'Ed25519' } : {});
    expect(verifyProofSignature(proof, alg, jwk)).toBe(true);
    const tampered = `${proof.slice(0, proof.indexOf('.') + 1)}e30${proof.slice(proof.lastIndexOf('.'))}`;
    expect(verifyProofSignature(tampered, alg, jwk)).toBe(false);
  });

  it('refuses a key that does not fit the algorithm, and algorithms outside the list', async () => {
    const { proof, jwk } = await signed('ES256');
    expect(verifyProofSignature(proof, 'ES384', jwk)).toBe(false);
    expect(verifyProofSignature(proof, 'RS256', jwk)).toBe(false);
    expect(verifyProofSignature(proof, 'none', jwk)).toBe(false);
    expect(verifyProofSignature(proof, 'HS256', jwk)).toBe(false);
    expect(verifyProofSignature(proof, 'ES256', { kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' })).toBe(false);
  });
});

/** The alphabet of base64url, in the order of the values its characters stand for. */
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe('verifyProofSignature and the spelling of the signature (RFC 7515 §2)', () => {
  // ES384 (96 bytes) and RSA-3072 (384 bytes) signatures are 128 and 512 characters, 4n: Node's decoder drops one
  // character more. ES256, EdDSA (64 bytes) and RSA-2048 (256 bytes) ones end in a character with four unused bits,
  // which it ignores. Either way it decodes the signature that verifies, from a proof that is not the one signed.
  it.each([
    ['ES256', {}],
    ['ES384', {}],
    ['EdDSA', { crv: 'Ed25519' }],
    ['RS256', {}],
    ['PS256', { modulusLength: 3072 }],
  ] as const)('refuses a %s proof whose signature is spelled otherwise, though it decodes the same', async (alg, options) => {
    const { proof, jwk } = await signed(alg, options);
    const signature = proof.slice(proof.lastIndexOf('.') + 1);
    const other =
      signature.length % 4 === 0 ? `${signature}A` : `${signature.slice(0, -1)}${BASE64URL[BASE64URL.indexOf(signature.slice(-1)) | 1]}`;
    expect(other).not.toBe(signature);
    expect(Buffer.from(other, 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(true);
    expect(verifyProofSignature(`${proof.slice(0, proof.lastIndexOf('.'))}.${other}`, alg, jwk)).toBe(false);
    expect(verifyProofSignature(proof, alg, jwk)).toBe(true);
  });
});

describe('verifyProofSignature with RSA keys the caller chose', () => {
  // The key travels in the proof: its verification costs what its caller makes it cost (a 3072-bit exponent, some
  // 35 ms of the main thread), so only keys of a bounded modulus and the usual exponents are checked at all.
  it('refuses a genuine RS256 or PS256 proof whose key has a public exponent above 65537', async () => {
    for (const [alg, publicExponent, accepted] of [
      ['RS256', 65537, true],
      ['PS256', 65537, true],
      ['RS256', 65539, false],
      ['PS256', 65539, false],
    ] as const) {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent });
      const jwk = publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
      const proof = await new SignJWT({ htm: 'GET', jti: 'x' }).setProtectedHeader({ alg, typ: 'dpop+jwt', jwk } as never).sign(privateKey);
      expect(verifyProofSignature(proof, alg, jwk)).toBe(accepted);
    }
  });
});

describe('resourceURL (the htu a guard expects)', () => {
  it('rebuilds the URL from Host, and from X-Forwarded-* only behind a trusted proxy', async () => {
    const { resourceURL } = await import('../src/dpop/resource.js');
    const { makeSentinel } = await import('./helpers/fixtures.js');
    const headers = { host: '10.0.0.5:3000', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' };
    const direct = contextOf(makeSentinel());
    expect(resourceURL(direct, { method: 'GET', url: '/api/x?y=1', headers })).toBe('http://10.0.0.5:3000/api/x?y=1');
    const proxied = contextOf(makeSentinel({ trustProxy: true }));
    expect(resourceURL(proxied, { method: 'GET', url: '/api/x', headers })).toBe('https://api.example.com/api/x');
    // An absolute URL without a connection described is the caller's public URL, taken as given.
    expect(resourceURL(direct, { method: 'GET', url: 'https://a.example/b', headers })).toBe('https://a.example/b');
    // An absolute-form target as received: its authority stands in for Host, its scheme is not believed, a trusted
    // proxy wins.
    expect(resourceURL(direct, { method: 'GET', url: 'https://a.example/b', headers, secure: false })).toBe('http://a.example/b');
    expect(resourceURL(direct, { method: 'GET', url: 'https://a.example/b', headers, ip: '10.0.0.9' })).toBe('http://a.example/b');
    expect(resourceURL(direct, { method: 'GET', url: 'https://a.example/b', headers, secure: true })).toBe('https://a.example/b');
    expect(resourceURL(direct, { method: 'GET', url: 'http://user@a.example', headers, secure: false })).toBe('http://a.example/');
    expect(resourceURL(proxied, { method: 'GET', url: 'http://a.example/b?c', headers, secure: false })).toBe(
      'https://api.example.com/b?c',
    );
  });

  it('believes X-Forwarded-* only from a peer that trustProxy names or counts', async () => {
    const { resourceURL } = await import('../src/dpop/resource.js');
    const { makeSentinel } = await import('./helpers/fixtures.js');
    const headers = { host: '10.0.0.5:3000', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' };
    const listed = contextOf(makeSentinel({ trustProxy: ['10.0.0.0/8'] }));
    const url = (context: typeof listed, ip: string | undefined) => resourceURL(context, { method: 'GET', url: '/x', headers, ip });
    expect(url(listed, '10.1.2.3')).toBe('https://api.example.com/x');
    expect(url(listed, '::ffff:10.1.2.3')).toBe('https://api.example.com/x');
    expect(url(listed, '203.0.113.9')).toBe('http://10.0.0.5:3000/x');
    // An unknown peer is no trusted proxy.
    expect(url(listed, undefined)).toBe('http://10.0.0.5:3000/x');
    const oneHop = contextOf(makeSentinel({ trustProxy: 1 }));
    expect(url(oneHop, '203.0.113.9')).toBe('https://api.example.com/x');
    expect(url(oneHop, undefined)).toBe('http://10.0.0.5:3000/x');
    expect(url(contextOf(makeSentinel({ trustProxy: 0 })), '10.1.2.3')).toBe('http://10.0.0.5:3000/x');
    // true keeps its meaning: every peer is the proxy.
    expect(url(contextOf(makeSentinel({ trustProxy: true })), undefined)).toBe('https://api.example.com/x');
  });
});
