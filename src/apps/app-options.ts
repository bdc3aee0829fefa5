/**
 * The `apps` option: applications as the host writes them (plain secret allowed) and their conversion to the
 * {@link App} every registry holds.
 */
import type { App, GrantType, KeyedAppFields, TokenEndpointAuthMethod } from './app.js';
import { hashClientSecret } from './client-secrets.js';
import type { SigningAlgorithm } from '../keys/signing-keys.js';

/**
 * An application as written in the `apps` option: the registration data of platform-operations.md §2.2 (installation id,
 * secret, redirection endpoints) and RFC 6749 §2.
 *
 * @example
 * const apps: AppOptions[] = [{ accountId: '123456', clientId, clientSecretHash, redirectUris: ['https://app.example.com/cb'] }];
 */
export interface AppOptions extends KeyedAppFields {
  /** The platform account the app is installed in (1–256 characters, no control characters, `/`, `?` or `#`). @defaultValue required */
  accountId: string;
  /** The installation id, unique within the account; the `client_id` of OAuth requests. @defaultValue required */
  clientId: string;
  /** The plain secret: hashed at startup and then dropped (give this or `clientSecretHash`, not both); shorter than 32 characters, a startup warning (a generated one has 43). @defaultValue none */
  clientSecret?: string | undefined;
  /** Or its hash from {@link hashClientSecret}. @defaultValue none (a public or `private_key_jwt` client) */
  clientSecretHash?: string | undefined;
  /** Where the authorization code may be sent, compared as exact strings. @defaultValue `[]` */
  redirectUris?: readonly string[] | undefined;
  /** The grants the app may use. @defaultValue all three; `authorization_code` and `refresh_token` for a public client */
  grantTypes?: readonly GrantType[] | undefined;
  /** How the app authenticates at the token endpoints (`'none'`: a public client, with PKCE). @defaultValue `'client_secret_basic'` (`client_secret_post` accepted too) */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod | undefined;
  /** Shown on the login page (at most 200 characters; not blank; no bidirectional overrides or control characters). @defaultValue none */
  name?: string | undefined;
  /** Space-separated scopes the app may be granted (RFC 6749 §3.3 scope tokens, one space between); carried in its tokens. @defaultValue none */
  scope?: string | undefined;
  /** Algorithm of the app's ID tokens (`id_token_signed_response_alg`); a key of it must be configured. @defaultValue RS256 when an RSA key exists, else the first key's */
  idTokenSignedResponseAlg?: SigningAlgorithm | undefined;
  /** Where RP-initiated logout may send the browser back (exact match). @defaultValue the app's redirect URIs */
  postLogoutRedirectUris?: readonly string[] | undefined;
  /** Where the app takes back-channel logout tokens (https, or http on a loopback host; no fragment). @defaultValue none (the app is not told of ended sessions) */
  backchannelLogoutUri?: string | undefined;
  /** Whether the app needs `sid` in its logout tokens (they always carry it). @defaultValue `true` */
  backchannelLogoutSessionRequired?: boolean | undefined;
  /** `default_max_age` in seconds (a positive integer): its authorization requests without `max_age` get `max_age` of this value. @defaultValue none */
  defaultMaxAge?: number | undefined;
  /** The protected resources (RFC 8707: absolute https URIs, no fragment) the app may ask tokens for; a token for one carries it as `aud`. @defaultValue the service's `defaultResources` */
  resources?: readonly string[] | undefined;
}

/** Turns an `apps` entry into an {@link App}, hashing the plain secret. */
export function appFromOptions(options: AppOptions): App {
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
    ...backchannelFields(options),
    ...(options.defaultMaxAge === undefined ? {} : { defaultMaxAge: options.defaultMaxAge }),
    ...(options.resources === undefined ? {} : { resources: [...new Set(options.resources)] }),
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
  if (options.profile !== undefined) fields.profile = options.profile;
  return fields;
}

/**
 * The back-channel logout fields that are set (absent ones stay absent, so existing apps compare unchanged).
 *
 * @example backchannelFields({ backchannelLogoutUri: 'https://app.example.com/logout' })
 */
export function backchannelFields(options: Pick<App, 'backchannelLogoutUri' | 'backchannelLogoutSessionRequired'>): Partial<App> {
  const fields: Partial<App> = {};
  if (options.backchannelLogoutUri !== undefined) fields.backchannelLogoutUri = options.backchannelLogoutUri;
  if (options.backchannelLogoutSessionRequired !== undefined)
    fields.backchannelLogoutSessionRequired = options.backchannelLogoutSessionRequired;
  return fields;
}
