/**
 * The floor of a token endpoint: bare node:http (the HTTP ceiling row) plus the signatures its answer needs, and
 * nothing else. No implementation can do less, so a row's instructions per request ÷ its floor's is how far the
 * service's own work is from the machine's limit (bench/instructions.ts prints that ratio).
 *
 * Variants (the client-credentials workload, so the runner's first-answer check applies):
 * - `cc` (`floor-cc`): one ES256 at+jwt per request with the claims and sizes of sentinel-idp's consumer-bound
 *   client-credentials token (iss, sub, aud, client_id, azp, gty, iat, exp, jti).
 * - `two` (`floor-two-signatures`): the answer of a code exchange or refresh rotation: an at+jwt with the claims of
 *   sentinel-idp's user token, an ID token carrying the access token's `at_hash`, and a 256-bit refresh token.
 *
 * The JWS is assembled from strings (header encoded once at startup) and signed with node:crypto on the main
 * thread: the least any Node.js implementation does per token. Per request: the body is read, jti, iat and the
 * refresh token are new, and every signature is a fresh one.
 */
import { createHash, createPrivateKey, type JsonWebKey, randomBytes, randomUUID, sign } from 'node:crypto';
import { ACCOUNT_ID, CLIENT_ID, CONSUMER_ID, HOST, issuerFor, KID, privateJwkFromEnv } from '../fixtures.js';
import { TOKEN_HEADERS } from './handwritten.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen, readBody } from './util.js';

const b64 = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

export async function start(port: number, variant = 'cc'): Promise<RunningTarget> {
  if (variant !== 'cc' && variant !== 'two') throw new Error(`floor: unknown variant ${variant}`);
  const key = createPrivateKey({ key: privateJwkFromEnv() as JsonWebKey, format: 'jwk' });
  const issuer = issuerFor(port);
  const atHeader = b64(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: KID }));
  const idHeader = b64(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: KID }));
  const jws = (header: string, claims: object): string => {
    const input = `${header}.${b64(JSON.stringify(claims))}`;
    return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  };
  const answer =
    variant === 'cc'
      ? (): string => {
          const iat = Math.floor(Date.now() / 1000);
          const accessToken = jws(atHeader, {
            iss: issuer,
            sub: CONSUMER_ID,
            aud: ACCOUNT_ID,
            client_id: CLIENT_ID,
            azp: CLIENT_ID,
            gty: 'client_credentials',
            iat,
            exp: iat + 3600,
            jti: randomUUID(),
          });
          return JSON.stringify({ access_token: accessToken, token_type: 'Bearer', expires_in: 3600 });
        }
      : (): string => {
          const iat = Math.floor(Date.now() / 1000);
          const accessToken = jws(atHeader, {
            iss: `${issuer}/sentinel/api/account/${ACCOUNT_ID}`,
            sub: CONSUMER_ID,
            aud: ACCOUNT_ID,
            client_id: CLIENT_ID,
            azp: CLIENT_ID,
            gty: 'authorization_code',
            gid: randomUUID(),
            scope: 'openid offline_access api:read',
            auth_time: iat,
            iat,
            exp: iat + 3600,
            jti: randomUUID(),
          });
          const atHash = createHash('sha256').update(accessToken).digest().subarray(0, 16).toString('base64url');
          const idToken = jws(idHeader, {
            iss: `${issuer}/sentinel/api/account/${ACCOUNT_ID}`,
            sub: CONSUMER_ID,
            aud: CLIENT_ID,
            azp: CLIENT_ID,
            auth_time: iat,
            nonce: 'bench-nonce-0123456789abcdefghijkl',
            at_hash: atHash,
            iat,
            exp: iat + 3600,
          });
          return JSON.stringify({
            access_token: accessToken,
            token_type: 'Bearer',
            expires_in: 3600,
            refresh_token: randomBytes(32).toString('base64url'),
            id_token: idToken,
            scope: 'openid offline_access api:read',
          });
        };
  const server = await listen(
    (req, res) => {
      readBody(req).then(
        () => {
          const body = answer();
          res.writeHead(200, { ...TOKEN_HEADERS, 'content-length': Buffer.byteLength(body) });
          res.end(body);
        },
        () => {
          res.writeHead(400);
          res.end();
        },
      );
    },
    port,
    HOST,
  );
  return { close: () => closeServer(server) };
}
