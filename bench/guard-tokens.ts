/**
 * Access tokens for the guard rows, minted once per run in the runner with the run's key: the claims sentinel-idp
 * puts in a consumer-bound token (RFC 9068 at+jwt, ES256), each token for its own consumer. Signed with
 * node:crypto directly because 20,000 tokens through jose would take longer than a round.
 */
import { createPrivateKey, randomUUID, sign } from 'node:crypto';
import type { JWK } from 'jose';
import { ACCOUNT_ID, CLIENT_ID, GUARD_ISSUER, guardPath, KID } from './fixtures.js';

/** Tokens and the guarded path each one may call (its consumer's). */
export interface GuardTokens {
  tokens: string[];
  paths: string[];
  next: number;
}

export function mintGuardTokens(privateJwk: JWK, count: number): GuardTokens {
  const key = createPrivateKey({ key: privateJwk as never, format: 'jwk' });
  const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: KID })).toString('base64url');
  const iat = Math.floor(Date.now() / 1000);
  const tokens: string[] = [];
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const consumer = randomUUID();
    const claims = {
      iss: GUARD_ISSUER,
      sub: consumer,
      aud: ACCOUNT_ID,
      exp: iat + 3600,
      iat,
      jti: randomUUID(),
      client_id: CLIENT_ID,
      azp: CLIENT_ID,
      gty: 'client_credentials',
    };
    const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    tokens.push(`${input}.${signature}`);
    paths.push(guardPath(consumer));
  }
  return { tokens, paths, next: 0 };
}
