/**
 * The client information response (RFC 7591 §3.2.1, RFC 7592 §3): the registered metadata, the client id, and
 * where and how to manage it. Secrets appear only in the response that created them.
 */
import type { App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { routeUrl } from '../http/route-paths.js';

/** The app's configuration endpoint (RFC 7592 §1), under its account's issuer. */
export function registrationClientUri(context: SentinelContext, app: App): string {
  return routeUrl(context.config, 'client-configuration', { accountId: app.accountId, clientId: app.clientId });
}

/** The JSON members describing `app`, plus `extra` (a fresh secret or registration access token). */
export function clientInformation(context: SentinelContext, app: App, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const confidential = app.tokenEndpointAuthMethod !== 'none';
  return {
    client_id: app.clientId,
    ...(app.createdAt === undefined ? {} : { client_id_issued_at: app.createdAt }),
    // 0: the secret does not expire by itself (RFC 7591 §3.2.1); it ends by rotation or deletion.
    ...(confidential ? { client_secret_expires_at: 0 } : {}),
    ...extra,
    registration_client_uri: registrationClientUri(context, app),
    redirect_uris: app.redirectUris,
    grant_types: app.grantTypes,
    response_types: app.grantTypes.includes('authorization_code') ? ['code'] : [],
    token_endpoint_auth_method: app.tokenEndpointAuthMethod,
    ...(app.name === undefined ? {} : { client_name: app.name }),
    ...(app.scope === undefined ? {} : { scope: app.scope }),
    ...(app.backchannelLogoutUri === undefined
      ? {}
      : {
          backchannel_logout_uri: app.backchannelLogoutUri,
          backchannel_logout_session_required: app.backchannelLogoutSessionRequired ?? true,
        }),
    ...(app.defaultMaxAge === undefined ? {} : { default_max_age: app.defaultMaxAge }),
    ...(app.resources === undefined ? {} : { resources: app.resources }),
  };
}
