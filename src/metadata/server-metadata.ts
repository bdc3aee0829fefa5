/**
 * Authorization server metadata (RFC 8414) of one account's issuer, `{issuer}{basePath}/api/account/{accountId}`.
 * Served at the path-inserted well-known URL (RFC 8414 §3.1), at the appended one many clients try, and as
 * OpenID Connect discovery (the same document; OIDC Discovery §4). Every value listed works: the document is the
 * contract clients configure themselves from.
 */
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { cacheableJSON, type SentinelResponse } from '../http/messages.js';
import { keyBoundMetadata } from './key-bound-metadata.js';
import { exchangeGrantsOf } from './exchange-grants.js';
import { SCOPE_CLAIMS, SUPPORTED_CLAIMS } from '../userinfo/claims.js';
import { type RouteName, routeUrl } from '../http/route-paths.js';
import { reachableAcrValues } from './acr-values.js';
import { catalogueSet } from '../i18n/catalogues.js';

/** The UserInfo claims, and what ID tokens carry of the sign-in: `acr`, `amr` and the session's `sid`. */
const CLAIMS_SUPPORTED: readonly string[] = [...SUPPORTED_CLAIMS, 'acr', 'amr', 'sid'];

/**
 * The languages the service's own pages speak (OIDC Discovery §3 `ui_locales_supported`): the bundled catalogues and
 * the host's, the default first, as `ui_locales` names them. A host login page receives the app's `ui_locales` too,
 * but the sign-out, device and error pages are always these.
 */
function uiLocalesSupported(context: SentinelContext): string[] {
  const { byTag, defaultTag } = catalogueSet(context.config.i18n);
  const first = byTag.get(defaultTag)?.tag ?? defaultTag;
  const tags = [...byTag.values()].map((entry) => entry.tag);
  return [first, ...tags.filter((tag) => tag !== first)];
}

/**
 * The metadata document of an account's issuer; `issuer` equals the `iss` of its tokens and redirects.
 * `exchangeGrants`: the RFC 8693 / RFC 7523 grants an app of the account has (`exchangeGrantsOf`).
 */
export function authorizationServerMetadata(
  context: SentinelContext,
  accountId: string,
  exchangeGrants: readonly string[] = [],
): Record<string, unknown> {
  const { config } = context;
  const url = (name: RouteName): string => routeUrl(config, name, { accountId });
  return {
    issuer: context.accountIssuer(accountId),
    authorization_endpoint: url('authorize'),
    token_endpoint: url('token'),
    revocation_endpoint: url('token-revoke'),
    introspection_endpoint: url('token-introspect'),
    jwks_uri: config.keysPerAccount ? url('account-jwks') : routeUrl(config, 'jwks'),
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:device_code',
      ...exchangeGrants,
    ],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    scopes_supported: ['openid', ...Object.keys(SCOPE_CLAIMS)],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [...context.keys.byAlg.keys()],
    // OpenID Connect Discovery §3: what the OpenID Connect endpoints and parameters of this issuer support.
    userinfo_endpoint: url('userinfo'),
    end_session_endpoint: url('end-session'),
    claims_supported: CLAIMS_SUPPORTED,
    claim_types_supported: ['normal'],
    prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    claims_parameter_supported: true,
    ui_locales_supported: uiLocalesSupported(context),
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    require_request_uri_registration: false,
    ...(context.config.registration === undefined ? {} : { registration_endpoint: url('register') }),
    // Levels of assurance (OpenID Connect Discovery §3): the acr values a sign-in here can reach and report.
    acr_values_supported: reachableAcrValues(config),
    // OpenID Connect Back-Channel Logout §2.1: logout tokens to apps that register a URI, always with sid.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    // RFC 8628 §4: the device authorization grant.
    device_authorization_endpoint: url('device-authorization'),
    // RFC 9449, RFC 7523, RFC 9126: DPoP, private_key_jwt and pushed requests; overrides the auth method lists above.
    ...keyBoundMetadata(context, accountId),
    // Client ID metadata documents (MCP authorization): https client ids are read from the URL they name.
    ...(context.config.clientIdMetadataDocuments.enabled ? { client_id_metadata_document_supported: true } : {}),
  };
}

/**
 * Answers a metadata request; an unknown account is a 404 so that nobody can enumerate issuers that do not exist.
 *
 * @example
 * // GET /.well-known/oauth-authorization-server/sentinel/api/account/123
 * // 200 {"issuer":"https://id.example.com/sentinel/api/account/123","authorization_endpoint":"…/authorize",…}
 */
export async function handleMetadata(context: SentinelContext, accountId: string): Promise<SentinelResponse> {
  if (!(await context.apps.hasAccount(accountId))) {
    throw new OAuthError('invalid_request', 'unknown account', { status: 404 });
  }
  context.observation?.noteAccount(accountId);
  return cacheableJSON(
    200,
    authorizationServerMetadata(context, accountId, await exchangeGrantsOf(context, accountId)),
    context.config.jwksMaxAge,
  );
}
