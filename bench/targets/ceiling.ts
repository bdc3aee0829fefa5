/**
 * The HTTP ceiling: bare node:http reading the same POST body and answering a fixed JSON token response with the
 * token headers. The token is signed once at startup (valid JWT, same claims) so the runner's check passes; no
 * per-request work beyond HTTP and reading the body.
 */
import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import { ACCOUNT_ID, CLIENT_ID, CONSUMER_ID, HOST, issuerFor, KID, privateJwkFromEnv } from '../fixtures.js';
import { TOKEN_HEADERS } from './handwritten.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen, readBody } from './util.js';

export async function start(port: number): Promise<RunningTarget> {
  const key = await importJWK(privateJwkFromEnv(), 'ES256');
  const iat = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ client_id: CLIENT_ID, azp: CLIENT_ID })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: KID })
    .setIssuer(issuerFor(port))
    .setSubject(CONSUMER_ID)
    .setAudience(ACCOUNT_ID)
    .setIssuedAt(iat)
    .setExpirationTime(iat + 3600)
    .setJti(randomUUID())
    .sign(key);
  const body = JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: '3600' });
  const server = await listen(
    (req, res) => {
      readBody(req).then(
        () => {
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
