/**
 * Whether an application may be registered: its redirect URIs (RFC 8252 §7.1, RFC 6749 §3.1.2), its grants and its
 * way of authenticating. Shared by the `apps` option, `registerApp()`, dynamic registration and the CLI.
 */
import type { App, GrantType } from './app.js';
import { assertValidKeyRegistration } from '../client-assertion/registration.js';
import { isClientSecretHash } from './client-secrets.js';
import { displayTextProblem } from './display-text.js';
import { ConfigurationError } from '../errors.js';
import { parseAbsoluteURI, webURIProblem } from './uri-syntax.js';
import { resourceURIProblem } from './resource-uri.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:', 'ftp:', 'ws:', 'wss:']);
// An http(s) host a browser can reach: a DNS name (letters, digits and hyphens between dots; a final dot allowed),
// which an IPv4 address also is, or an IPv6 literal in brackets. RFC 3986 §3.2.2 lets a host hold `*`, `;`, `,`,
// `_`, `~`, quotes and more, and the URL parser keeps them; no resolver knows such a host, while the app's redirect
// origin goes into the pages' form-action, where `*` is a wildcard, `;` a directive and `,` a second policy.
const WEB_HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?)$/;

/**
 * Why a redirect URI may not be registered, or `null` when it may: an absolute RFC 3986 URI as written (see
 * `uri-syntax.ts`: no backslash, `//` and a host written out, read the same by browsers), no fragment, https (http
 * only on loopback) on a host browsers resolve ({@link WEB_HOST}), or a private-use scheme with a dot (RFC 8252
 * §7.1); no userinfo, no control characters.
 */
export function redirectURIProblem(uri: string): string | null {
  const parts = parseAbsoluteURI(uri);
  if (typeof parts === 'string') return parts;
  if (parts.hasFragment) return 'must not contain a fragment';
  if (parts.authority?.userinfo !== undefined) return 'must not contain userinfo';
  const scheme = `${parts.scheme}:`;
  if (scheme === 'https:' || scheme === 'http:') {
    const problem = webURIProblem(uri, parts);
    if (problem !== null) return problem;
    if (!WEB_HOST.test(parts.authority?.host ?? '')) {
      return 'must have a host that is a DNS name (letters, digits and hyphens between dots), an IPv4 or a bracketed IPv6 address';
    }
    if (scheme === 'https:') return null;
    // The host as written: the checks above guarantee browsers read the same one.
    return LOOPBACK_HOSTS.has(parts.authority?.host.toLowerCase() ?? '')
      ? null
      : 'must use https (http is allowed only for loopback hosts)';
  }
  try {
    new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  if (FORBIDDEN_SCHEMES.has(scheme)) return `must not use the ${scheme} scheme`;
  return parts.scheme.includes('.') ? null : 'must use https or a private-use scheme (e.g. com.example.app:)';
}

/**
 * Why a back-channel logout URI may not be registered, or `null` when it may (OpenID Connect Back-Channel Logout
 * §2.2: an absolute URI, no fragment): https, or http on a loopback host, as redirect URIs; no userinfo. Where the
 * host resolves to is checked when the app is registered and again at every delivery (`src/sessions/logout-target.ts`).
 *
 * @example backchannelLogoutURIProblem('http://app.example.com/logout') // 'must use https (http is allowed only for loopback hosts)'
 */
export function backchannelLogoutURIProblem(uri: string): string | null {
  if (uri.length > 2000) return 'must be at most 2000 characters';
  const problem = redirectURIProblem(uri);
  if (problem !== null) return problem;
  const scheme = uri.slice(0, uri.indexOf(':')).toLowerCase();
  return scheme === 'https' || scheme === 'http' ? null : 'must use https (http is allowed only for loopback hosts)';
}

// RFC 6749 §3.3: scope = scope-token *( SP scope-token ), scope-token = 1*NQCHAR (no space, `"` or `\`).
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/;

/**
 * Why an app's `scope` may not be registered, or `null` when it may: space-separated RFC 6749 §3.3 scope tokens, as
 * dynamic registration demands. The value is returned verbatim as the `scope` of the app's tokens and token
 * responses, and split on single spaces into the scopes an authorization request may name.
 *
 * @example scopeProblem('read write') // null; scopeProblem('read,  write') // 'must be …'
 */
export function scopeProblem(scope: string): string | null {
  return SCOPE.test(scope)
    ? null
    : 'must be space-separated RFC 6749 scope tokens (no control characters, quotes or backslashes; one space between)';
}

/** The longest app name: the options' schema, registration and every registry write hold to it (checked here). */
export const MAX_APP_NAME_LENGTH = 200;

/** The largest `defaultMaxAge`: the largest `max_age` the authorization endpoint takes as a limit (oidc-params.ts). */
export const MAX_DEFAULT_MAX_AGE = 1_000_000_000;

/**
 * Why a `default_max_age` may not be registered, or `null` when it may: a positive integer of seconds, at most
 * {@link MAX_DEFAULT_MAX_AGE} (0 would make every sign-in sign in again; OpenID Connect Registration 1.0 §2).
 *
 * @example defaultMaxAgeProblem(600) // null
 */
export function defaultMaxAgeProblem(value: unknown): string | null {
  return Number.isSafeInteger(value) && (value as number) > 0 && (value as number) <= MAX_DEFAULT_MAX_AGE
    ? null
    : `must be a positive integer number of seconds, at most ${MAX_DEFAULT_MAX_AGE}`;
}

/**
 * Grants the token endpoint serves only to an authenticated client: a public app registered for one would be refused
 * (`invalid_client`) at every request, so the registration is refused instead. Client credentials (RFC 6749 §4.4),
 * token exchange (RFC 8693 §2.1: a delegation names the client as the actor, which only its credentials prove) and
 * JWT bearer (a brand's JWT is a bearer credential; the app that presents it must be who it says).
 */
const CONFIDENTIAL_GRANTS: readonly GrantType[] = [
  'client_credentials',
  'urn:ietf:params:oauth:grant-type:token-exchange',
  'urn:ietf:params:oauth:grant-type:jwt-bearer',
];

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
  if (app.backchannelLogoutUri !== undefined) {
    const problem = backchannelLogoutURIProblem(app.backchannelLogoutUri);
    if (problem !== null) throw new ConfigurationError(`${field}.backchannelLogoutUri`, problem);
  }
  app.resources?.forEach((uri, index) => {
    const problem = resourceURIProblem(uri);
    if (problem !== null) throw new ConfigurationError(`${field}.resources[${index}]`, problem);
  });
  if (app.defaultMaxAge !== undefined) {
    const problem = defaultMaxAgeProblem(app.defaultMaxAge);
    if (problem !== null) throw new ConfigurationError(`${field}.defaultMaxAge`, problem);
  }
  if (app.name !== undefined) {
    // Shown on the login page: nothing in it may change how it or the text around it reads.
    const problem =
      app.name.length > MAX_APP_NAME_LENGTH ? `must be at most ${MAX_APP_NAME_LENGTH} characters` : displayTextProblem(app.name);
    if (problem !== null) throw new ConfigurationError(`${field}.name`, problem);
  }
  if (app.scope !== undefined) {
    const problem = scopeProblem(app.scope);
    if (problem !== null) throw new ConfigurationError(`${field}.scope`, problem);
  }
  if (app.grantTypes.includes('authorization_code') && app.redirectUris.length === 0) {
    throw new ConfigurationError(`${field}.redirectUris`, 'an app with the authorization_code grant needs at least one redirect URI');
  }
  if (app.tokenEndpointAuthMethod === 'private_key_jwt') {
    assertValidKeyRegistration(app, field);
  } else if (app.tokenEndpointAuthMethod === 'none') {
    const refused = CONFIDENTIAL_GRANTS.find((grant) => app.grantTypes.includes(grant));
    if (refused !== undefined) {
      throw new ConfigurationError(`${field}.grantTypes`, `a public client (tokenEndpointAuthMethod none) cannot use ${refused}`);
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
