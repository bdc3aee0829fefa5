/**
 * The application registry: lookup by account and client id, secret hashing, and the constant-time secret check.
 *
 * Client secrets are ≥ 256-bit random values, so a plain SHA-256 digest is a sound way to store them (no
 * password-hashing work factor is needed). Digests are compared with `crypto.timingSafeEqual`, and an unknown
 * client is checked against a dummy digest so that both failures take the same path (RFC 6749 §2.3.1, §10.10).
 */
import { hash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { assertValidKeyRegistration } from './client-assertion/registration.js';
import { ConfigurationError, OAuthError } from './errors.js';
import type { SigningAlgorithm } from './keys.js';

/**
 * Grant types an application may be registered for: RFC 6749 §4.1 (authorization code), §4.4 (client credentials,
 * here consumer-bound as in platform-operations.md §4.1) and §6 (refresh).
 *
 * @example
 * const grantTypes: GrantType[] = ['client_credentials'];
 */
export type GrantType = 'authorization_code' | 'client_credentials' | 'refresh_token';

/**
 * How a client authenticates at the token endpoint (RFC 7591 §2). Confidential clients may use either secret method.
 *
 * @example
 * const app: AppOptions = { accountId, clientId, redirectUris, tokenEndpointAuthMethod: 'none' }; // a public client, PKCE only
 */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none' | 'private_key_jwt';

/**
 * The key-based part of an app's registration (RFC 7591 §2 `jwks` / `jwks_uri`, RFC 9449, RFC 9126): public keys for
 * `private_key_jwt` client assertions, and the per-app demands for DPoP-bound tokens and pushed requests.
 *
 * @example
 * const keyed: KeyedAppFields = { tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://app.example.com/jwks.json', requireDPoP: true };
 */
export interface KeyedAppFields {
  /** The app's public keys, inline (`private_key_jwt`). */
  jwks?: { keys: readonly Record<string, unknown>[] } | undefined;
  /** Where the app publishes its public keys (`private_key_jwt`); fetched with a timeout, size cap and cache. */
  jwksUri?: string | undefined;
  /** Every token request of the app must carry a DPoP proof; its tokens are all key-bound. */
  requireDPoP?: boolean | undefined;
  /** The app's authorization requests must be pushed first (`request_uri` from the PAR endpoint). */
  requirePushedAuthorizationRequests?: boolean | undefined;
}

/**
 * A registered application, as an {@link AppStore} returns it: the client registration of RFC 6749 §2 (type,
 * redirection endpoints, credentials), with the secret only as its hash.
 *
 * @example
 * const app: App = {
 *   accountId: '123456',
 *   clientId: '6f1c0b7e-3d7a-4c1e-9a51-1f0a2b3c4d5e',
 *   clientSecretHash: hashClientSecret(secret),
 *   redirectUris: ['https://app.example.com/cb'],
 *   grantTypes: ['authorization_code', 'refresh_token'],
 *   tokenEndpointAuthMethod: 'client_secret_basic',
 * };
 */
export interface App extends KeyedAppFields {
  accountId: string;
  /** The installation id. */
  clientId: string;
  /** `sha256:` + base64url SHA-256 digest of the secret; absent for public clients. */
  clientSecretHash?: string | undefined;
  redirectUris: readonly string[];
  grantTypes: readonly GrantType[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** Shown on the login page. */
  name?: string | undefined;
  /** Space-separated scopes the app may be granted; carried in its tokens. */
  scope?: string | undefined;
  /**
   * Algorithm of the app's ID tokens (OpenID Connect Registration `id_token_signed_response_alg`); a key of that
   * algorithm must be configured. Default: RS256 when an RSA key exists, else the first key's algorithm.
   */
  idTokenSignedResponseAlg?: SigningAlgorithm | undefined;
  /**
   * Where RP-initiated logout may send the browser back (exact match). Without it, the app's redirect URIs are
   * accepted, as the logout endpoint always did.
   */
  postLogoutRedirectUris?: readonly string[] | undefined;
  /** Earlier secrets that still authenticate until their expiry, after a rotation with overlap. */
  retiringSecrets?: readonly RetiringSecret[] | undefined;
  /** Hash ({@link hashClientSecret}) of the RFC 7592 registration access token; only apps registered over HTTP. */
  registrationAccessTokenHash?: string | undefined;
  /** When the client id was issued, epoch seconds (RFC 7591 `client_id_issued_at`). */
  createdAt?: number | undefined;
  /** Set only in listings of stores that can disable apps; `findApp` never returns a disabled app. */
  disabled?: boolean | undefined;
}

/**
 * A previous client secret that keeps working until `expiresAt` (epoch seconds), so that a rotation does not cut
 * off the instances of an application that have not picked up the new secret yet (RFC 7591 §3.2.1 lets a client
 * secret expire; here the old one expires when the new one is issued plus the overlap).
 *
 * @example
 * const retiring: RetiringSecret = { hash: hashClientSecret(oldSecret), expiresAt: Math.floor(Date.now() / 1000) + 86_400 };
 */
export interface RetiringSecret {
  hash: string;
  expiresAt: number;
}

/**
 * Who made a change to the registry (RFC 7592 §2: reads, updates and deletions of a registration), for the store's
 * change log; never a secret.
 *
 * @example
 * await appStore.deleteApp?.('123456', clientId, { actor: 'cli' });
 */
export interface AppChange {
  actor: string;
}

/**
 * A host-provided application registry (the client registrations of RFC 6749 §2). Methods may be synchronous or
 * async; `null` means "not found".
 *
 * @example
 * const appStore: AppStore = {
 *   findApp: (accountId, clientId) => db.apps.findOne({ accountId, clientId }),
 *   hasAccount: (accountId) => db.accounts.exists(accountId),
 * };
 */
export interface AppStore {
  findApp(accountId: string, clientId: string): App | null | Promise<App | null>;
  hasAccount(accountId: string): boolean | Promise<boolean>;
  /** Creates or replaces an app. Needed for `sentinel.registerApp()` and dynamic registration. */
  saveApp?(app: App, change?: AppChange): void | Promise<void>;
  /** The apps of an account (management; not on the hot path). */
  listApps?(accountId: string): readonly App[] | Promise<readonly App[]>;
  /** Replaces an existing app's metadata (not its secrets); `false` when the app does not exist. */
  updateApp?(app: App, change?: AppChange): boolean | Promise<boolean>;
  /** Removes an app with its secrets; `false` when it did not exist. */
  deleteApp?(accountId: string, clientId: string, change?: AppChange): boolean | Promise<boolean>;
  /**
   * Makes `secretHash` the current secret; the previous current secret keeps working for `overlapSeconds`. Expired
   * retiring secrets are dropped. Returns the updated app, or `null` when it does not exist.
   */
  rotateClientSecret?(
    accountId: string,
    clientId: string,
    secretHash: string,
    overlapSeconds: number,
    change?: AppChange,
  ): App | null | Promise<App | null>;
}

const HASH_PREFIX = 'sha256:';

/**
 * The storable form of a client secret (RFC 6749 §2.3.1, §10.1: the server keeps client credentials confidential;
 * a 256-bit random secret needs no slow password hash).
 * @example hashClientSecret('s3cr3t') // 'sha256:…'
 */
export function hashClientSecret(secret: string): string {
  return HASH_PREFIX + hash('sha256', secret, 'base64url');
}

/** True when `hash` has the form {@link hashClientSecret} produces. */
export function isClientSecretHash(hash: string): boolean {
  return hash.startsWith(HASH_PREFIX) && Buffer.from(hash.slice(HASH_PREFIX.length), 'base64url').length === 32;
}

const DUMMY_DIGEST = hash('sha256', randomBytes(32), 'buffer');

/**
 * Compares a presented secret with a stored hash in constant time (RFC 6749 §2.3.1, §10.10). With no stored hash
 * (unknown client) the same digest and comparison run against a dummy, and the answer is false.
 *
 * @example
 * if (!verifyClientSecret(presentedSecret, app?.clientSecretHash)) throw new OAuthError('invalid_client', 'client authentication failed');
 */
export function verifyClientSecret(presented: string, storedHash: string | undefined): boolean {
  const presentedDigest = hash('sha256', presented, 'buffer');
  const stored = storedHash?.startsWith(HASH_PREFIX) ? Buffer.from(storedHash.slice(HASH_PREFIX.length), 'base64url') : undefined;
  const expected = stored !== undefined && stored.length === 32 ? stored : DUMMY_DIGEST;
  return timingSafeEqual(presentedDigest, expected) && expected !== DUMMY_DIGEST;
}

/**
 * A new client secret: 256 random bits, base64url (RFC 6749 §10.10 asks for credentials an attacker cannot guess).
 *
 * @example
 * const clientSecret = generateClientSecret(); // show once; store hashClientSecret(clientSecret)
 */
export function generateClientSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** A new client id: a lower-case UUID, the platform's installation-id shape. */
export function generateClientId(): string {
  return randomUUID();
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:', 'ftp:', 'ws:', 'wss:']);

/**
 * Why a redirect URI may not be registered, or `null` when it may: absolute, no fragment, https (http only on
 * loopback), or a private-use scheme with a dot (RFC 8252 §7.1); no userinfo, no control characters.
 */
export function redirectURIProblem(uri: string): string | null {
  if (/[\u0000-\u0020\u007f]/.test(uri)) return 'must not contain spaces or control characters';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  if (uri.includes('#')) return 'must not contain a fragment';
  if (url.username !== '' || url.password !== '') return 'must not contain userinfo';
  if (url.protocol === 'https:') return url.hostname === '' ? 'must have a host' : null;
  if (url.protocol === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname) ? null : 'must use https (http is allowed only for loopback hosts)';
  }
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `must not use the ${url.protocol} scheme`;
  return url.protocol.slice(0, -1).includes('.') ? null : 'must use https or a private-use scheme (e.g. com.example.app:)';
}

/**
 * An application as written in the `apps` option: the registration data of platform-operations.md §2.2 (installation id,
 * secret, redirection endpoints) and RFC 6749 §2.
 *
 * @example
 * const apps: AppOptions[] = [{ accountId: '123456', clientId, clientSecretHash, redirectUris: ['https://app.example.com/cb'] }];
 */
export interface AppOptions extends KeyedAppFields {
  accountId: string;
  clientId: string;
  /** The plain secret: hashed at startup and then dropped. */
  clientSecret?: string | undefined;
  /** Or its hash from {@link hashClientSecret}. */
  clientSecretHash?: string | undefined;
  redirectUris?: readonly string[] | undefined;
  grantTypes?: readonly GrantType[] | undefined;
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod | undefined;
  name?: string | undefined;
  scope?: string | undefined;
  /** See {@link App.idTokenSignedResponseAlg}. */
  idTokenSignedResponseAlg?: SigningAlgorithm | undefined;
  /** See {@link App.postLogoutRedirectUris}. */
  postLogoutRedirectUris?: readonly string[] | undefined;
}

/** Turns an `apps` entry into an {@link App}, hashing the plain secret. */
export function toApp(options: AppOptions): App {
  const isPublic = options.tokenEndpointAuthMethod === 'none';
  return {
    accountId: options.accountId,
    clientId: options.clientId,
    clientSecretHash: options.clientSecretHash ?? (options.clientSecret === undefined ? undefined : hashClientSecret(options.clientSecret)),
    redirectUris: [...(options.redirectUris ?? [])],
    grantTypes: [
      ...(options.grantTypes ??
        (isPublic ? ['authorization_code', 'refresh_token'] : ['authorization_code', 'client_credentials', 'refresh_token'])),
    ],
    tokenEndpointAuthMethod: options.tokenEndpointAuthMethod ?? 'client_secret_basic',
    name: options.name,
    scope: options.scope,
    ...(options.idTokenSignedResponseAlg === undefined ? {} : { idTokenSignedResponseAlg: options.idTokenSignedResponseAlg }),
    ...(options.postLogoutRedirectUris === undefined ? {} : { postLogoutRedirectUris: [...options.postLogoutRedirectUris] }),
    ...keyedFields(options),
  };
}

/** The key-based fields that are set, copied (absent ones stay absent, so existing apps compare unchanged). */
function keyedFields(options: KeyedAppFields): KeyedAppFields {
  const fields: KeyedAppFields = {};
  if (options.jwks !== undefined) fields.jwks = { keys: options.jwks.keys.map((key) => ({ ...key })) };
  if (options.jwksUri !== undefined) fields.jwksUri = options.jwksUri;
  if (options.requireDPoP !== undefined) fields.requireDPoP = options.requireDPoP;
  if (options.requirePushedAuthorizationRequests !== undefined) {
    fields.requirePushedAuthorizationRequests = options.requirePushedAuthorizationRequests;
  }
  return fields;
}

/**
 * The default {@link AppStore}: the apps of the options, in memory, keyed by account and client id (RFC 6749 §2.2:
 * a client id is unique within its authorization server, here within its account).
 *
 * @example
 * const appStore = new MemoryAppStore([app]);
 * appStore.findApp('123456', app.clientId); // app
 */
export class MemoryAppStore implements AppStore {
  readonly #apps = new Map<string, App>();
  readonly #accounts = new Map<string, number>();

  constructor(apps: readonly App[] = []) {
    for (const app of apps) this.saveApp(app);
  }

  findApp(accountId: string, clientId: string): App | null {
    return this.#apps.get(`${accountId}\u0000${clientId}`) ?? null;
  }

  hasAccount(accountId: string): boolean {
    return this.#accounts.has(accountId);
  }

  saveApp(app: App): void {
    const key = `${app.accountId}\u0000${app.clientId}`;
    if (!this.#apps.has(key)) this.#accounts.set(app.accountId, (this.#accounts.get(app.accountId) ?? 0) + 1);
    this.#apps.set(key, app);
  }

  listApps(accountId: string): App[] {
    return [...this.#apps.values()].filter((app) => app.accountId === accountId);
  }

  updateApp(app: App): boolean {
    const current = this.findApp(app.accountId, app.clientId);
    if (current === null) return false;
    // Metadata only: the secrets and the registration access token stay those of the stored app.
    this.#apps.set(`${app.accountId}\u0000${app.clientId}`, {
      ...app,
      clientSecretHash: current.clientSecretHash,
      retiringSecrets: current.retiringSecrets,
      registrationAccessTokenHash: current.registrationAccessTokenHash,
      createdAt: current.createdAt,
    });
    return true;
  }

  deleteApp(accountId: string, clientId: string): boolean {
    if (!this.#apps.delete(`${accountId}\u0000${clientId}`)) return false;
    const left = (this.#accounts.get(accountId) ?? 1) - 1;
    if (left === 0) this.#accounts.delete(accountId);
    else this.#accounts.set(accountId, left);
    return true;
  }

  rotateClientSecret(accountId: string, clientId: string, secretHash: string, overlapSeconds: number): App | null {
    const current = this.findApp(accountId, clientId);
    if (current === null) return null;
    // Not rounded: a rotation with a 1-second overlap must not lose up to a second of it.
    const now = Date.now() / 1000;
    const retiring = (current.retiringSecrets ?? []).filter((secret) => secret.expiresAt > now);
    if (current.clientSecretHash !== undefined && overlapSeconds > 0) {
      retiring.push({ hash: current.clientSecretHash, expiresAt: now + overlapSeconds });
    }
    const rotated: App = { ...current, clientSecretHash: secretHash, retiringSecrets: retiring };
    this.#apps.set(`${accountId}\u0000${clientId}`, rotated);
    return rotated;
  }
}

/**
 * Checks a presented secret against an app's current secret and every retiring one that has not expired, all in
 * constant time and all of them every time, so the answer's timing says nothing about which one matched
 * (RFC 6749 §2.3.1, §10.10).
 *
 * @example
 * if (!verifyAppSecret(presented, app)) throw new OAuthError('invalid_client', 'client authentication failed');
 */
export function verifyAppSecret(presented: string, app: App | null): boolean {
  let ok = verifyClientSecret(presented, app?.clientSecretHash);
  const now = Date.now() / 1000;
  for (const secret of app?.retiringSecrets ?? []) {
    const matches = verifyClientSecret(presented, secret.hash);
    ok = ok || (matches && secret.expiresAt > now);
  }
  return ok;
}

/**
 * Refuses a grant the app is not registered for (RFC 6749 §5.2 `unauthorized_client`).
 * @example requireGrant(app, 'client_credentials');
 */
export function requireGrant(app: App, grantType: GrantType): void {
  if (!app.grantTypes.includes(grantType)) {
    throw new OAuthError('unauthorized_client', `this application is not registered for the ${grantType} grant`);
  }
}

/** Checks an app for registration; throws a {@link ConfigurationError} naming the field. */
export function assertValidApp(app: App, field: string): void {
  app.redirectUris.forEach((uri, index) => {
    const problem = redirectURIProblem(uri);
    if (problem !== null) throw new ConfigurationError(`${field}.redirectUris[${index}]`, problem);
  });
  app.postLogoutRedirectUris?.forEach((uri, index) => {
    const problem = redirectURIProblem(uri);
    if (problem !== null) throw new ConfigurationError(`${field}.postLogoutRedirectUris[${index}]`, problem);
  });
  if (app.grantTypes.includes('authorization_code') && app.redirectUris.length === 0) {
    throw new ConfigurationError(`${field}.redirectUris`, 'an app with the authorization_code grant needs at least one redirect URI');
  }
  if (app.tokenEndpointAuthMethod === 'private_key_jwt') {
    assertValidKeyRegistration(app, field);
  } else if (app.tokenEndpointAuthMethod === 'none') {
    if (app.grantTypes.includes('client_credentials')) {
      throw new ConfigurationError(`${field}.grantTypes`, 'a public client (tokenEndpointAuthMethod none) cannot use client_credentials');
    }
  } else if (app.clientSecretHash === undefined) {
    throw new ConfigurationError(`${field}.clientSecret`, 'a confidential app needs clientSecret or clientSecretHash');
  } else if (!isClientSecretHash(app.clientSecretHash)) {
    throw new ConfigurationError(
      `${field}.clientSecretHash`,
      'must be the output of hashClientSecret() ("sha256:" + 43 base64url characters)',
    );
  }
}
