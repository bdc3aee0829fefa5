/**
 * Fixtures of the token-exchange and JWT-bearer suites: a brand identity provider (its own key pair, signing with
 * jose as a brand's backend would), an account that trusts it, and a bot app registered for both grants.
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import type { SentinelOptions } from '../../src/index.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, baseOptions } from './fixtures.js';

export const BRAND_ISSUER = 'https://id.brand.example';
export const BOT_CLIENT_ID = 'b0b0b0b0-1111-4222-8333-444444444444';
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const TYPE = {
  accessToken: 'urn:ietf:params:oauth:token-type:access_token',
  idToken: 'urn:ietf:params:oauth:token-type:id_token',
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
} as const;
export const ACCOUNT_ISSUER = `http://localhost/sentinel/api/account/${ACCOUNT}`;
export const TOKEN_PATH = `/sentinel/api/account/${ACCOUNT}/token`;

/** A brand's signing key pair: the private key signs consumer JWTs, the public JWK goes into `trustedIssuers`. */
export interface BrandKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/** A new ES256 brand key with a `kid`. */
export async function brandKey(kid: string = randomUUID()): Promise<BrandKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey: privateKey as CryptoKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

/** What a brand JWT may differ in from the default (claims; `null` leaves a claim out). */
export interface BrandClaims {
  [claim: string]: unknown;
}

/**
 * A consumer JWT as the brand's identity provider signs it: `iss` the brand, `sub` the consumer, `aud` this
 * account's issuer, one minute of life, a fresh `jti`. Overrides replace claims; `null` removes one.
 */
export async function brandJWT(key: BrandKey, overrides: BrandClaims = {}, header: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {
    iss: BRAND_ISSUER,
    sub: CONSUMER_UUID,
    aud: ACCOUNT_ISSUER,
    iat: now,
    exp: now + 60,
    jti: randomUUID(),
    ...overrides,
  };
  for (const [name, value] of Object.entries(claims)) if (value === null) delete claims[name];
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: key.publicJwk.kid as string, ...header }).sign(key.privateKey);
}

/** The bot app: confidential, registered for both exchange grants (and client credentials for its own app token). */
export function botApp(overrides: Record<string, unknown> = {}): NonNullable<SentinelOptions['apps']>[number] {
  return {
    accountId: ACCOUNT,
    clientId: BOT_CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUris: [],
    grantTypes: [TOKEN_EXCHANGE, JWT_BEARER, 'client_credentials'],
    scope: 'read write',
    ...overrides,
  };
}

/** The base options with the brand trusted by the account (inline keys) and the bot app added. */
export function exchangeOptions(key: BrandKey, overrides: Partial<SentinelOptions> = {}): Partial<SentinelOptions> {
  const base = baseOptions();
  return {
    apps: [...(base.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, scope: 'read write' } : app)), botApp()],
    trustedIssuers: [{ accountId: ACCOUNT, issuer: BRAND_ISSUER, jwks: { keys: [key.publicJwk as Record<string, unknown>] } }],
    ...overrides,
  };
}

/** The bot's client authentication in the form body. */
export const BOT = { client_id: BOT_CLIENT_ID, client_secret: CLIENT_SECRET };
