/**
 * The brand's side: a brand's own identity provider, which knows its signed-in consumer and says so in a short JWT
 * signed with its private key (jose). It publishes the public key as a JWK Set, which the platform's account lists
 * as a trusted issuer (`trustedIssuers[].jwksUri`). In a real deployment this is the brand's backend; here it is a
 * small HTTP server on loopback.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

/** A running brand identity provider. */
export interface BrandIdentityProvider {
  /** The `iss` of its JWTs. */
  issuer: string;
  /** Where its public keys are published. */
  jwksUri: string;
  /** Signs the JWT that proves `consumerId` to the platform account whose issuer is `audience`. */
  signConsumerJWT(consumerId: string, audience: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts the brand's identity provider on 127.0.0.1 and a free port.
 * @example const brand = await startBrandIdentityProvider();
 */
export async function startBrandIdentityProvider(): Promise<BrandIdentityProvider> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = randomUUID();
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] });
  const server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/.well-known/jwks.json') {
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
      response.end(jwks);
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer: origin,
    jwksUri: `${origin}/.well-known/jwks.json`,
    signConsumerJWT(consumerId, audience) {
      // What the brand knows: who is signed in. Five minutes is plenty: the app exchanges it at once (an hour at most).
      return new SignJWT({ sub: consumerId })
        .setProtectedHeader({ alg: 'ES256', kid })
        .setIssuer(origin)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime('5m')
        .setJti(randomUUID())
        .sign(privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
