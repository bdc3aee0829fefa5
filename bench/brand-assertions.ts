/**
 * The brand JWT exchange rows' requests, made by the runner before each round (outside its CPU window): each a
 * complete JWT bearer form (client credentials + a brand JWT about the bench consumer with its own `jti`, because a
 * `jti` is single use). Signed with node:crypto directly, as the guard tokens are, so minting stays short; minted per
 * round so that no JWT of a long run has expired.
 */
import { createPrivateKey, randomUUID, sign } from 'node:crypto';
import type { JWK } from 'jose';
import { BRAND_ISSUER, BRAND_KID, CLIENT_ID, CLIENT_SECRET, CONSUMER_ID, JWT_BEARER_GRANT } from './fixtures.js';

/** The form bodies, used round-robin from `next`. */
export interface BrandAssertions {
  bodies: string[];
  next: number;
}

/** `count` request bodies, each with a brand JWT of ten minutes' life addressed to the exchanging client. */
export function mintBrandAssertions(brandPrivateJwk: JWK, count: number): BrandAssertions {
  const key = createPrivateKey({ key: brandPrivateJwk as never, format: 'jwk' });
  const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid: BRAND_KID })).toString('base64url');
  const iat = Math.floor(Date.now() / 1000);
  const bodies: string[] = [];
  for (let i = 0; i < count; i++) {
    const claims = { iss: BRAND_ISSUER, sub: CONSUMER_ID, aud: CLIENT_ID, iat, exp: iat + 600, jti: randomUUID() };
    const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    bodies.push(
      new URLSearchParams({
        grant_type: JWT_BEARER_GRANT,
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        assertion: `${input}.${signature}`,
      }).toString(),
    );
  }
  return { bodies, next: 0 };
}
