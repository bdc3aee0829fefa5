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
