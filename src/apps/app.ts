/**
 * What a registered application is, and the {@link AppStore} contract every application registry implements.
 * Secrets are in `client-secrets.ts`, registration checks in `app-validation.ts`, the `apps` option in
 * `app-options.ts` and the in-memory registry in `memory-app-store.ts`.
 */
import { OAuthError } from '../errors.js';
import type { SigningAlgorithm } from '../keys/signing-keys.js';
import type { TrustedIssuer } from '../trusted-issuers/trusted-issuer.js';

/**
 * Grant types an application may be registered for: RFC 6749 §4.1 (authorization code), §4.4 (client credentials,
 * here consumer-bound as in platform-operations.md §4.1) and §6 (refresh).
 *
 * @example
 * const grantTypes: GrantType[] = ['client_credentials'];
 */
export type GrantType =
  | 'authorization_code'
  | 'client_credentials'
  | 'refresh_token'
  | typeof DEVICE_CODE_GRANT
  // RFC 8693 token exchange and RFC 7523 JWT bearer: consumers proven by a trusted issuer, and delegation.
  | 'urn:ietf:params:oauth:grant-type:token-exchange'
  | 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/**
 * The device authorization grant (RFC 8628 §3.4). An app uses it only when registered for it: a device code is
 * phishable by design (anyone can show a person a user code), so no app gets it by default.
 *
 * @example
 * const grantTypes: GrantType[] = [DEVICE_CODE_GRANT, 'refresh_token'];
 */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

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
  jwks?:
    | {
        /** The public JWKs (RFC 7517); members a reader does not know are kept. */
        keys: readonly Record<string, unknown>[];
      }
    | undefined;
  /** Where the app publishes its public keys (`private_key_jwt`); fetched with a timeout, size cap and cache. */
  jwksUri?: string | undefined;
  /** Every token request of the app must carry a DPoP proof; its tokens are all key-bound. */
  requireDPoP?: boolean | undefined;
  /** The app's authorization requests must be pushed first (`request_uri` from the PAR endpoint). */
  requirePushedAuthorizationRequests?: boolean | undefined;
  // FAPI 2.0 (issue #34).
  /**
   * `'fapi2'`: the app follows the FAPI 2.0 Security Profile (PAR, PKCE S256, DPoP, `private_key_jwt` with the
   * issuer as audience, codes of at most 60 s, refresh tokens not rotated, ES256/PS256/EdDSA only).
   */
  profile?: 'fapi2' | undefined;
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
  /**
   * Where the app takes OpenID Connect Back-Channel Logout tokens (`backchannel_logout_uri`): https, or http on a
   * loopback host, no fragment. Without it the app is not told when a session it got tokens through ends.
   */
  backchannelLogoutUri?: string | undefined;
  /**
   * Whether the app needs `sid` in its logout tokens and ID tokens (`backchannel_logout_session_required`).
   * The service always sends `sid` with the session's tokens, so this only records what the app asked. Default `true`.
   */
  backchannelLogoutSessionRequired?: boolean | undefined;
  /**
   * `default_max_age` (OpenID Connect Registration 1.0 §2), seconds: an authorization request of the app without
   * `max_age` is answered as if it carried `max_age` of this value (an older sign-in signs in again); an explicit
   * `max_age` overrides it. A positive integer, at most 10⁹.
   */
  defaultMaxAge?: number | undefined;
  /** Earlier secrets that still authenticate until their expiry, after a rotation with overlap. */
  retiringSecrets?: readonly RetiringSecret[] | undefined;
  /** Hash (`hashClientSecret`) of the RFC 7592 registration access token; only apps registered over HTTP. */
  registrationAccessTokenHash?: string | undefined;
  /** When the client id was issued, epoch seconds (RFC 7591 `client_id_issued_at`). */
  createdAt?: number | undefined;
  /** Set only in listings of stores that can disable apps, and by `findDisabledApp`; `findApp` never returns a disabled app. */
  disabled?: boolean | undefined;
  /**
   * The protected resources (RFC 8707 absolute URIs) the app may ask tokens for with `resource`; a token asked for
   * one of them carries it as its `aud`. Without it, the service's `defaultResources`.
   */
  resources?: readonly string[] | undefined;
}

/**
 * The metadata of an app a patch may set. Ids, secrets, the registration access token, the creation time and the
 * disabled flag have their own operations (or none) and are not patched.
 *
 * @example
 * const patch: AppPatch = { redirectUris: ['https://app.example.com/cb'], name: undefined }; // sets the URIs, clears the name
 */
export type AppPatch = Partial<
  Pick<
    App,
    | 'redirectUris'
    | 'grantTypes'
    | 'tokenEndpointAuthMethod'
    | 'name'
    | 'scope'
    | 'idTokenSignedResponseAlg'
    | 'postLogoutRedirectUris'
    | 'backchannelLogoutUri'
    | 'backchannelLogoutSessionRequired'
    | 'defaultMaxAge'
    | 'jwks'
    | 'jwksUri'
    | 'requireDPoP'
    | 'requirePushedAuthorizationRequests'
    | 'profile'
    | 'resources'
  >
>;

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
  /** The app `clientId` of account `accountId`, or `null` when there is none (or it is disabled). */
  findApp(accountId: string, clientId: string): App | null | Promise<App | null>;
  /**
   * Whether the account exists, so an unknown account can be told apart from an unknown client. An account with
   * apps exists while any of them is kept, a disabled one too (its logout tokens are still signed with the
   * account's keys); it ends with its last app's deletion.
   */
  hasAccount(accountId: string): boolean | Promise<boolean>;
  /** Creates or replaces an app. Needed for `sentinel.registerApp()` and dynamic registration. */
  saveApp?(app: App, change?: AppChange): void | Promise<void>;
  /** The apps of an account (management; not on the hot path). */
  listApps?(accountId: string): readonly App[] | Promise<readonly App[]>;
  /**
   * Replaces an existing app's metadata (not its secrets); a disabled app is updated too and stays disabled. `false`
   * when the app does not exist.
   */
  updateApp?(app: App, change?: AppChange): boolean | Promise<boolean>;
  /**
   * Changes some of an existing app's metadata, atomically: calls `update` with the app as it is now (a disabled one
   * too, with `disabled: true`), applies the {@link AppPatch} it returns to that same app (`applyAppPatch`), and
   * writes the result, so a concurrent change to a field the patch does not name is kept. No other write to the app
   * may come between the read and the write (a row lock, or a retried conditional write; `update` must then be
   * pure, as it may run more than once). When `update` throws, nothing is written and the error propagates. Returns
   * the app as written, or `null` when it does not exist. Optional: without it, the registration endpoint reads the
   * app and calls `updateApp` at once, which leaves a short window for a concurrent change to be lost.
   */
  patchApp?(accountId: string, clientId: string, update: (current: App) => AppPatch, change?: AppChange): App | null | Promise<App | null>;
  /** Removes an app with its secrets; `false` when it did not exist. */
  deleteApp?(accountId: string, clientId: string, change?: AppChange): boolean | Promise<boolean>;
  /**
   * Makes `secretHash` the current secret; the previous current secret keeps working for `overlapSeconds`. Expired
   * retiring secrets are dropped, and the others end with this overlap at the latest (none outlives it); with
   * `overlapSeconds` 0 every earlier secret is dropped, also one still in an earlier rotation's overlap (the way out
   * of a leaked secret). At most `MAX_RETIRING_SECRETS` (3) retiring secrets are kept: beyond that, those made
   * current longest ago are dropped. Returns the updated app, or `null` when it does not exist.
   */
  rotateClientSecret?(
    accountId: string,
    clientId: string,
    secretHash: string,
    overlapSeconds: number,
    change?: AppChange,
  ): App | null | Promise<App | null>;
  /**
   * Disables an app: it stays listed (with `disabled: true`) and keeps its secrets, but `findApp` no longer returns
   * it, so its clients and tokens stop working. `false` when it does not exist. Optional (the operator console
   * offers it when present).
   */
  disableApp?(accountId: string, clientId: string, change?: AppChange): boolean | Promise<boolean>;
  /** Enables a disabled app again, with the secrets it had; `false` when it does not exist. */
  enableApp?(accountId: string, clientId: string, change?: AppChange): boolean | Promise<boolean>;
  /**
   * The app `clientId` of account `accountId` only while it is disabled (with `disabled: true`), else `null`. Used
   * for one thing: a disabled app is still sent its back-channel logout tokens (its tokens no longer work, but its own
   * sessions with the user live on, and it may be enabled again). Optional, with `disableApp`: without it a disabled
   * app is told nothing.
   */
  findDisabledApp?(accountId: string, clientId: string): App | null | Promise<App | null>;
  /**
   * The brand issuers the account trusts beyond the `trustedIssuers` option (the PostgreSQL registry's
   * `trusted_issuers` table). Optional: without it, the option alone decides.
   */
  findTrustedIssuers?(accountId: string): readonly TrustedIssuer[] | Promise<readonly TrustedIssuer[]>;
}

/**
 * Where a logout may send the browser back, by exact match: the app's post-logout redirect URIs, or its redirect URIs
 * when it registered none. Both logout endpoints ask this, so a dedicated list cannot be bypassed through either.
 * @example if (postLogoutTargets(app).includes(target)) return redirect(303, target);
 */
export function postLogoutTargets(app: App): readonly string[] {
  return app.postLogoutRedirectUris ?? app.redirectUris;
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
