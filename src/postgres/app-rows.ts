/**
 * How an app is laid out in the registry's tables and read back: the row of `SELECT_APPS`, its conversion to an
 * {@link App}, and what the change log may keep of an app (never a secret or a hash).
 */
import type { Pool } from 'pg';
import type { App, GrantType, KeyedAppFields, RetiringSecret, TokenEndpointAuthMethod } from '../apps/app.js';

export interface AppRow {
  account_id: string;
  client_id: string;
  name: string | null;
  scope: string | null;
  grant_types: string[];
  token_endpoint_auth_method: string;
  registration_access_token_hash: string | null;
  created_at: number;
  disabled: boolean;
  redirect_uris: string[];
  current_secrets: string[];
  retiring: RetiringSecret[];
  /**
   * The `metadata` jsonb column: the key-based fields ({@link KeyedAppFields}) of a `private_key_jwt` or DPoP app,
   * and the OpenID Connect fields that have no column of their own.
   */
  metadata: AppMetadata | null;
}

export const SELECT_APPS = `
SELECT a.account_id, a.client_id, a.name, a.scope, a.grant_types, a.token_endpoint_auth_method,
       a.registration_access_token_hash, a.metadata, extract(epoch FROM a.created_at)::float8 AS created_at,
       a.disabled_at IS NOT NULL AS disabled,
       ARRAY(SELECT r.uri FROM sentinel_app_redirect_uris r
              WHERE r.account_id = a.account_id AND r.client_id = a.client_id ORDER BY r.position) AS redirect_uris,
       ARRAY(SELECT s.secret_hash FROM sentinel_app_secrets s
              WHERE s.account_id = a.account_id AND s.client_id = a.client_id AND s.expires_at IS NULL) AS current_secrets,
       COALESCE((SELECT json_agg(json_build_object('hash', s.secret_hash, 'expiresAt', extract(epoch FROM s.expires_at)::float8)
                                 ORDER BY s.expires_at DESC)
                   FROM sentinel_app_secrets s
                  WHERE s.account_id = a.account_id AND s.client_id = a.client_id AND s.expires_at > now()), '[]'::json) AS retiring
  FROM sentinel_apps a`;

/**
 * Whether PostgreSQL text can hold these ids: it cannot hold NUL, and a query with one fails. Ids come from request
 * paths and bodies, so such an id is an unknown app (a 4xx for the client), never a database error (a 500).
 */
export function storable(...ids: string[]): boolean {
  return ids.every((id) => typeof id === 'string' && !id.includes('\u0000'));
}

/**
 * The row of one app that is enabled, or with `disabled` one that is disabled; `undefined` when there is none such.
 *
 * @example const row = await selectAppRow(pool, '123456', clientId, false);
 */
export async function selectAppRow(pool: Pool, accountId: string, clientId: string, disabled: boolean): Promise<AppRow | undefined> {
  const state = disabled ? 'IS NOT NULL' : 'IS NULL';
  const result = await pool.query<AppRow>(`${SELECT_APPS} WHERE a.account_id = $1 AND a.client_id = $2 AND a.disabled_at ${state}`, [
    accountId,
    clientId,
  ]);
  return result.rows[0];
}

export function appFromRow(row: AppRow): App {
  const app: App = {
    accountId: row.account_id,
    clientId: row.client_id,
    clientSecretHash: row.current_secrets[0],
    redirectUris: Object.freeze([...row.redirect_uris]),
    grantTypes: Object.freeze(row.grant_types as GrantType[]),
    tokenEndpointAuthMethod: row.token_endpoint_auth_method as TokenEndpointAuthMethod,
    name: row.name ?? undefined,
    scope: row.scope ?? undefined,
    retiringSecrets: Object.freeze(row.retiring.map((secret) => Object.freeze({ hash: secret.hash, expiresAt: secret.expiresAt }))),
    registrationAccessTokenHash: row.registration_access_token_hash ?? undefined,
    createdAt: Math.floor(row.created_at),
    ...(row.disabled ? { disabled: true } : {}),
    ...keyedFieldsOf(row.metadata),
  };
  // Cached apps are shared between requests: nobody may change one in place.
  return Object.freeze(app);
}

/** What the `metadata` column holds. */
export type AppMetadata = KeyedAppFields &
  Pick<
    App,
    | 'idTokenSignedResponseAlg'
    | 'postLogoutRedirectUris'
    | 'backchannelLogoutUri'
    | 'backchannelLogoutSessionRequired'
    | 'defaultMaxAge'
    | 'resources'
  >;

/**
 * The fields kept in the `metadata` column (public keys, DPoP/PAR demands, the ID token algorithm, `default_max_age`, post-logout
 * redirect URIs and RFC 8707 resources; never a secret).
 */
export function keyedFieldsOf(metadata: AppMetadata | null | undefined): AppMetadata {
  const fields: AppMetadata = {};
  if (metadata === null || metadata === undefined) return fields;
  if (metadata.jwks !== undefined)
    fields.jwks = Object.freeze({ keys: Object.freeze(metadata.jwks.keys.map((key) => Object.freeze({ ...key }))) });
  if (metadata.jwksUri !== undefined) fields.jwksUri = metadata.jwksUri;
  if (metadata.requireDPoP !== undefined) fields.requireDPoP = metadata.requireDPoP;
  if (metadata.requirePushedAuthorizationRequests !== undefined) {
    fields.requirePushedAuthorizationRequests = metadata.requirePushedAuthorizationRequests;
  }
  if (metadata.profile !== undefined) fields.profile = metadata.profile;
  if (metadata.idTokenSignedResponseAlg !== undefined) fields.idTokenSignedResponseAlg = metadata.idTokenSignedResponseAlg;
  if (metadata.postLogoutRedirectUris !== undefined) fields.postLogoutRedirectUris = Object.freeze([...metadata.postLogoutRedirectUris]);
  // Back-channel logout (OpenID Connect Back-Channel Logout §2.2).
  if (metadata.backchannelLogoutUri !== undefined) fields.backchannelLogoutUri = metadata.backchannelLogoutUri;
  if (metadata.backchannelLogoutSessionRequired !== undefined) {
    fields.backchannelLogoutSessionRequired = metadata.backchannelLogoutSessionRequired;
  }
  // OpenID Connect Registration 1.0 §2 `default_max_age`: a field of the JSON column, so no migration.
  if (metadata.defaultMaxAge !== undefined) fields.defaultMaxAge = metadata.defaultMaxAge;
  if (metadata.resources !== undefined) fields.resources = Object.freeze([...metadata.resources]);
  return fields;
}

/**
 * `$1` to `$7` of every statement that writes an app's row: its ids, name, scope, grant types, authentication method
 * and the JSON of its `metadata` column, in that order. One list, so the insert and the updates write the same.
 */
export function appRowValues(app: App): unknown[] {
  return [
    app.accountId,
    app.clientId,
    app.name ?? null,
    app.scope ?? null,
    [...app.grantTypes],
    app.tokenEndpointAuthMethod,
    JSON.stringify(keyedFieldsOf(app)),
  ];
}

/** What the change log keeps of an app: its metadata, never a secret or a hash. */
export function describe(app: App): Record<string, unknown> {
  return {
    redirectUris: app.redirectUris,
    grantTypes: app.grantTypes,
    tokenEndpointAuthMethod: app.tokenEndpointAuthMethod,
    ...(app.name === undefined ? {} : { name: app.name }),
    ...(app.scope === undefined ? {} : { scope: app.scope }),
    ...keyedFieldsOf(app),
  };
}
