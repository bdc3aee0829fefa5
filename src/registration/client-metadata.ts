/**
 * Client metadata of a registration or update request (RFC 7591 §2), checked field by field. A refusal names the
 * field: `invalid_redirect_uri` for a redirect URI, `invalid_client_metadata` for anything else (RFC 7591 §3.2.2).
 * Unknown fields are ignored, as RFC 7591 §2 asks. A field whose value is JSON `null` is read as left out.
 */
import { backchannelLogoutURIProblem, defaultMaxAgeProblem, redirectURIProblem } from '../apps/app-validation.js';
import { displayTextProblem } from '../apps/display-text.js';
import type { GrantType, TokenEndpointAuthMethod } from '../apps/app.js';
import { OAuthError } from '../errors.js';
import type { SentinelContext } from '../http/context.js';
import { literalTargetProblem, logoutTargetProblem } from '../sessions/logout-target.js';
import { resourceURIProblem } from '../token/resource-indicators.js';

/** The metadata this service keeps of a client. */
export interface ClientMetadata {
  redirectUris: string[];
  grantTypes: GrantType[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  name?: string | undefined;
  scope?: string | undefined;
  /** `backchannel_logout_uri` (OpenID Connect Back-Channel Logout §2.2). */
  backchannelLogoutUri?: string | undefined;
  /** `backchannel_logout_session_required`. */
  backchannelLogoutSessionRequired?: boolean | undefined;
  /** `default_max_age` (OpenID Connect Registration 1.0 §2), seconds. */
  defaultMaxAge?: number | undefined;
  /** RFC 8707 resources the client asks to be limited to (a sentinel-idp extension of RFC 7591 §2). */
  resources?: string[] | undefined;
}

const GRANTS: readonly GrantType[] = [
  'authorization_code',
  'client_credentials',
  'refresh_token',
  'urn:ietf:params:oauth:grant-type:device_code',
];
const METHODS: readonly TokenEndpointAuthMethod[] = ['client_secret_basic', 'client_secret_post', 'none'];
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const MAX_REDIRECT_URIS = 20;
const MAX_URI_LENGTH = 2000;
// RFC 6749 §3.3 scope-token characters, space-separated.
const SCOPE = /^[\u0021\u0023-\u005b\u005d-\u007e]+( [\u0021\u0023-\u005b\u005d-\u007e]+)*$/;

function metadataError(field: string, problem: string): OAuthError {
  return new OAuthError('invalid_client_metadata', `${field} ${problem}`);
}

/**
 * The value of a metadata field, `undefined` when it is left out or `null`: RFC 7592 §2.2 has a null value in an
 * update delete the field, as leaving it out does, and a server may ignore it. Every other value is checked as sent.
 */
function field(body: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(body, name) ? (body[name] ?? undefined) : undefined;
}

function stringArray(value: unknown, name: string): string[] {
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === 'string')) {
    throw metadataError(name, 'must be an array of strings');
  }
  return value;
}

/**
 * A redirect URI a client may register for itself: https, or http on a loopback host (RFC 8252 §7.3). Private-use
 * schemes need an operator (the `apps` option or the CLI), since a self-registered one could be any app's.
 */
function redirectUriProblem(uri: string): string | null {
  if (uri.length > MAX_URI_LENGTH) return `must be at most ${MAX_URI_LENGTH} characters`;
  const problem = redirectURIProblem(uri);
  if (problem !== null) return problem;
  const url = new URL(uri);
  if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname))) return null;
  return 'must use https (http is allowed only for loopback hosts)';
}

/**
 * Refuses redirect URIs a client may not register for itself, except those `registered` already holds: an update
 * (RFC 7592 §2.2) must send the client's redirect URIs again, and one an operator added (a private-use scheme, more
 * than a client may list) would otherwise leave it no update but dropping it.
 *
 * @example assertSelfRegistrableRedirectURIs(metadata.redirectUris, current.redirectUris);
 */
export function assertSelfRegistrableRedirectURIs(uris: readonly string[], registered: readonly string[] = []): void {
  if (uris.length > MAX_REDIRECT_URIS && !uris.every((uri) => registered.includes(uri))) {
    throw new OAuthError('invalid_redirect_uri', `redirect_uris may hold at most ${MAX_REDIRECT_URIS} URIs`);
  }
  uris.forEach((uri, index) => {
    const problem = registered.includes(uri) ? null : redirectUriProblem(uri);
    if (problem !== null) throw new OAuthError('invalid_redirect_uri', `redirect_uris[${index}] ${problem}`);
  });
}

function redirectUris(body: Record<string, unknown>, registered: readonly string[]): string[] {
  const value = field(body, 'redirect_uris');
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === 'string')) {
    throw new OAuthError('invalid_redirect_uri', 'redirect_uris must be an array of strings');
  }
  assertSelfRegistrableRedirectURIs(value, registered);
  return [...new Set(value)];
}

/**
 * Refuses grant types a client may not register for itself, except those `registered` already holds (an operator's
 * token exchange or JWT bearer grant), which an update must be able to send back as redirect URIs are.
 *
 * @example assertSelfRegistrableGrants(metadata.grantTypes, current.grantTypes);
 */
export function assertSelfRegistrableGrants(grants: readonly string[], registered: readonly string[] = []): void {
  for (const grant of grants) {
    if (!GRANTS.includes(grant as GrantType) && !registered.includes(grant)) {
      throw metadataError('grant_types', `may hold only ${GRANTS.join(', ')}`);
    }
  }
}

function grantTypes(body: Record<string, unknown>, registered: readonly string[]): GrantType[] {
  const value = field(body, 'grant_types');
  // RFC 7591 §2: the default is authorization_code alone.
  if (value === undefined) return ['authorization_code'];
  const grants = stringArray(value, 'grant_types');
  if (grants.length === 0) throw metadataError('grant_types', 'must not be empty');
  assertSelfRegistrableGrants(grants, registered);
  return [...new Set(grants as GrantType[])];
}

function authMethod(body: Record<string, unknown>): TokenEndpointAuthMethod {
  const value = field(body, 'token_endpoint_auth_method');
  if (value === undefined) return 'client_secret_basic';
  if (typeof value !== 'string' || !METHODS.includes(value as TokenEndpointAuthMethod)) {
    throw metadataError('token_endpoint_auth_method', `must be one of ${METHODS.join(', ')}`);
  }
  return value as TokenEndpointAuthMethod;
}

function optionalText(body: Record<string, unknown>, name: string, check: (value: string) => string | null): string | undefined {
  const value = field(body, name);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw metadataError(name, 'must be a string');
  const problem = check(value);
  if (problem !== null) throw metadataError(name, problem);
  return value;
}

/** `resources` (RFC 8707 URIs): at most 20, each a resource indicator. Whether they may be had is `unhonoured-metadata.ts`'s. */
function resources(body: Record<string, unknown>): string[] | undefined {
  const value = field(body, 'resources');
  if (value === undefined) return undefined;
  const uris = stringArray(value, 'resources');
  if (uris.length > MAX_REDIRECT_URIS) throw metadataError('resources', `may hold at most ${MAX_REDIRECT_URIS} URIs`);
  uris.forEach((uri, index) => {
    const problem = resourceURIProblem(uri);
    if (problem !== null) throw metadataError(`resources[${index}]`, problem);
  });
  return [...new Set(uris)];
}

/**
 * The metadata of a registration (RFC 7591 §3.1) or update (RFC 7592 §2.2) request. `registered`: an update's
 * client as it is, whose redirect URIs and grant types it may send back whatever registration alone allows.
 */
export function parseClientMetadata(
  body: Record<string, unknown>,
  registered: { redirectUris: readonly string[]; grantTypes: readonly string[] } = { redirectUris: [], grantTypes: [] },
): ClientMetadata {
  const uris = redirectUris(body, registered.redirectUris);
  const grants = grantTypes(body, registered.grantTypes);
  const method = authMethod(body);
  const responseTypes = field(body, 'response_types');
  if (responseTypes !== undefined) {
    const types = stringArray(responseTypes, 'response_types');
    if (types.some((type) => type !== 'code')) throw metadataError('response_types', 'may hold only code');
    if (types.length > 0 && !grants.includes('authorization_code')) {
      throw metadataError('response_types', 'code needs the authorization_code grant');
    }
  }
  if (method === 'none' && grants.includes('client_credentials')) {
    throw metadataError('grant_types', 'client_credentials needs a confidential client (token_endpoint_auth_method none is public)');
  }
  if (grants.includes('authorization_code') && uris.length === 0) {
    throw new OAuthError('invalid_redirect_uri', 'redirect_uris must hold at least one URI for the authorization_code grant');
  }
  const name = optionalText(body, 'client_name', (value) =>
    value.length === 0 || value.length > 200 ? 'must be 1-200 characters' : displayTextProblem(value),
  );
  const scope = optionalText(body, 'scope', (value) =>
    value.length > 1000 || !SCOPE.test(value) ? 'must be space-separated scope tokens (at most 1000 characters)' : null,
  );
  const backchannelLogoutUri = optionalText(body, 'backchannel_logout_uri', backchannelLogoutURIProblem);
  const required = field(body, 'backchannel_logout_session_required');
  if (required !== undefined && typeof required !== 'boolean')
    throw metadataError('backchannel_logout_session_required', 'must be a boolean');
  const defaultMaxAge = field(body, 'default_max_age');
  const maxAgeProblem = defaultMaxAge === undefined ? null : defaultMaxAgeProblem(defaultMaxAge);
  if (maxAgeProblem !== null) throw metadataError('default_max_age', maxAgeProblem);
  return {
    redirectUris: uris,
    grantTypes: grants,
    tokenEndpointAuthMethod: method,
    name,
    scope,
    ...(backchannelLogoutUri === undefined ? {} : { backchannelLogoutUri }),
    ...(required === undefined ? {} : { backchannelLogoutSessionRequired: required }),
    ...(defaultMaxAge === undefined ? {} : { defaultMaxAge: defaultMaxAge as number }),
    resources: resources(body),
  };
}

/** The DNS check's problem, or `null` once `ms` have passed without an answer (then, as for a name that does not resolve). */
async function answeredWithin(check: Promise<string | null>, ms: number): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([check, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Refuses a `backchannel_logout_uri` whose host is (or resolves to) an address the service may not send to, as
 * `invalid_client_metadata` (the same guard as a `jwks_uri`; `clientJwks.allowPrivateAddresses` lifts it). What the
 * URI itself says (an address written out, `localhost`) is always checked; where a name resolves is checked within
 * the fetch deadline (`clientJwks.timeoutMs`), its wait for one of the process's outbound lookup slots included
 * (src/client-assertion/outbound-lookups.ts: a lookup cannot be cancelled and holds a thread of libuv's pool until
 * the name server answers), else left to the delivery, which resolves and checks the URI again every time and
 * connects only to the address it checked.
 *
 * @example await checkLogoutTarget(context, parseClientMetadata(body));
 */
export async function checkLogoutTarget(context: SentinelContext, metadata: ClientMetadata): Promise<void> {
  const uri = metadata.backchannelLogoutUri;
  if (uri === undefined) return;
  const allowPrivate = context.config.clientJwks.allowPrivateAddresses;
  const literal = literalTargetProblem(uri, allowPrivate);
  if (literal !== null) throw metadataError('backchannel_logout_uri', literal);
  const { timeoutMs } = context.config.clientJwks;
  // The signal gives up the wait for a lookup slot; a lookup already running goes on, and is not waited for.
  const problem = await answeredWithin(logoutTargetProblem(uri, allowPrivate, AbortSignal.timeout(timeoutMs)), timeoutMs);
  if (problem !== null) throw metadataError('backchannel_logout_uri', problem);
}
