/**
 * Helpers of the DPoP, private_key_jwt and PAR tests: client key pairs, hand-made proofs and assertions (so each
 * bad input can be built on purpose), and a browser that signs in through the login page.
 */
import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { expect } from 'vitest';
import { createSentinel, type Sentinel, type SentinelOptions } from '../../src/index.js';
import { ACCOUNT, baseOptions, PASSWORD, USERNAME } from './fixtures.js';

export const KEYED_CLIENT_ID = 'c0ffee00-1111-4222-8333-444455556666';
export const KEYED_REDIRECT_URI = 'https://keyed.example.com/cb';
export const ACCOUNT_ISSUER = `http://localhost/sentinel/api/account/${ACCOUNT}`;
export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** An asymmetric key pair with its public JWK and thumbprint. */
export interface ClientKey {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
  privateJwk: JWK;
  jkt: string;
}

/** A fresh ES256 key pair (extractable, so the private JWK can be planted in a proof on purpose). */
export async function clientKey(kid: string = randomUUID()): Promise<ClientKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256' };
  return { privateKey, publicKey, publicJwk, privateJwk: await exportJWK(privateKey), jkt: await calculateJwkThumbprint(publicJwk) };
}

/** Options with a private_key_jwt app added (inline `jwks`, or `jwksUri`). */
export function keyedOptions(key: ClientKey, app: Record<string, unknown> = {}, overrides: Partial<SentinelOptions> = {}): SentinelOptions {
  const base = baseOptions(overrides);
  return {
    ...base,
    apps: [
      ...(base.apps ?? []),
      {
        accountId: ACCOUNT,
        clientId: KEYED_CLIENT_ID,
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwks: { keys: [key.publicJwk] },
        redirectUris: [KEYED_REDIRECT_URI],
        grantTypes: ['authorization_code', 'client_credentials', 'refresh_token'],
        ...app,
      },
    ],
  };
}

/** A sentinel with the keyed app. */
export function keyedSentinel(key: ClientKey, app: Record<string, unknown> = {}, overrides: Partial<SentinelOptions> = {}): Sentinel {
  return createSentinel(keyedOptions(key, app, overrides));
}

/** A DPoP proof; every header and claim can be overridden to build a bad one. */
export async function dpopProof(
  key: ClientKey,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
  signWith: CryptoKey | Uint8Array = key.privateKey,
): Promise<string> {
  const { kid: _kid, alg: _alg, ...jwk } = key.publicJwk;
  return new SignJWT({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk, ...header } as never)
    .sign(signWith);
}

/** A private_key_jwt client assertion (RFC 7523 §3); claims can be overridden. */
export async function clientAssertion(key: ClientKey, claims: Record<string, unknown> = {}, clientId = KEYED_CLIENT_ID): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: clientId, sub: clientId, aud: ACCOUNT_ISSUER, jti: randomUUID(), iat: now, exp: now + 60, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: key.publicJwk.kid as string })
    .sign(key.privateKey);
}

/** Form fields of client authentication by assertion. */
export async function assertionAuth(key: ClientKey, claims: Record<string, unknown> = {}): Promise<Record<string, string>> {
  return { client_assertion_type: ASSERTION_TYPE, client_assertion: await clientAssertion(key, claims) };
}

/**
 * A browser: follows an authorize URL (with the issuer's origin mapped to the server) to the login page, posts
 * the form, and returns the 303 Location (the callback, or an error redirect). A redirect straight to the app
 * (an error) is returned as is.
 */
export async function signIn(serverURL: string, authorize: string): Promise<URL> {
  const local = (location: string): string => new URL(location, serverURL).toString().replace('http://localhost', serverURL);
  const first = await fetch(local(authorize), { redirect: 'manual' });
  expect(first.status).toBe(302);
  const location = first.headers.get('location')!;
  if (!location.includes('/login?interaction=')) return new URL(location);
  const page = await fetch(local(location));
  const html = await page.text();
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
  expect(csrf).toBeDefined();
  const cookies = page.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');
  const posted = await fetch(local(location), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies, origin: 'http://localhost' },
    body: new URLSearchParams({ csrf_token: csrf!, username: USERNAME, password: PASSWORD }).toString(),
  });
  expect(posted.status).toBe(303);
  return new URL(posted.headers.get('location')!);
}
