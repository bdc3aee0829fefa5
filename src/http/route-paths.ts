/**
 * Where each endpoint lives: the one table of paths, which the router matches (`routes.ts`) and from which every
 * URL the service hands out is built (metadata, login and logout forms, DPoP and assertion audiences). Kept apart
 * from the route table so that the handlers that build URLs need not import the table that imports them.
 *
 * A path is relative to the base path, except one that starts with `/.well-known/` and marks the base path with
 * `{basePath}` (RFC 8414 §3.1 inserts the well-known segment before it). `{accountId}` and `{clientId}` are path
 * parameters.
 */
import type { ResolvedConfig } from '../config.js';

/** The issuer path of one account: `{issuer}{basePath}` + this is the `iss` of its tokens (RFC 8414, RFC 9207). */
export const ACCOUNT_PATH = '/api/account/{accountId}';

/** Every route's path, by route name. */
export const ROUTE_PATHS = {
  'app-token-v2': '/api/v2/account/{accountId}/app/token',
  jwks: '/well-known/jwks',
  'health-live': '/health/live',
  'health-ready': '/health/ready',
  authorize: `${ACCOUNT_PATH}/authorize`,
  login: `${ACCOUNT_PATH}/login`,
  'login-totp': `${ACCOUNT_PATH}/login/totp`,
  'login-passkey-options': `${ACCOUNT_PATH}/login/passkey/options`,
  'login-passkey': `${ACCOUNT_PATH}/login/passkey`,
  'login-passkey-register-options': `${ACCOUNT_PATH}/login/passkey/register/options`,
  'login-passkey-register': `${ACCOUNT_PATH}/login/passkey/register`,
  logout: `${ACCOUNT_PATH}/logout`,
  token: `${ACCOUNT_PATH}/token`,
  par: `${ACCOUNT_PATH}/par`,
  'token-revoke': `${ACCOUNT_PATH}/token/revoke`,
  'token-introspect': `${ACCOUNT_PATH}/token/introspect`,
  'app-token-v1': `${ACCOUNT_PATH}/app/token`,
  register: `${ACCOUNT_PATH}/register`,
  'client-configuration': `${ACCOUNT_PATH}/register/{clientId}`,
  'client-secret': `${ACCOUNT_PATH}/register/{clientId}/secret`,
  'account-jwks': `${ACCOUNT_PATH}/jwks`,
  metadata: `/.well-known/oauth-authorization-server{basePath}${ACCOUNT_PATH}`,
  'metadata-appended': `${ACCOUNT_PATH}/.well-known/oauth-authorization-server`,
  'openid-configuration': `${ACCOUNT_PATH}/.well-known/openid-configuration`,
  userinfo: `${ACCOUNT_PATH}/userinfo`,
  'end-session': `${ACCOUNT_PATH}/end_session`,
  'account-jwks-well-known': `${ACCOUNT_PATH}/.well-known/jwks.json`,
  // The device authorization grant (RFC 8628): src/device/.
  'device-authorization': `${ACCOUNT_PATH}/device_authorization`,
  device: `${ACCOUNT_PATH}/device`,
  'device-confirm': `${ACCOUNT_PATH}/device/confirm`,
  // The end user's account page (issue #35).
  account: `${ACCOUNT_PATH}/account`,
  'account-passkey-options': `${ACCOUNT_PATH}/account/passkeys/options`,
} as const;

/** The name of a route. */
export type RouteName = keyof typeof ROUTE_PATHS;

/** Values of a path's parameters; each is percent-encoded into its segment. */
export interface PathParams {
  accountId?: string | undefined;
  clientId?: string | undefined;
}

/** Whether a path names the base path itself (the path-inserted well-known URL) instead of living under it. */
export function isAbsolutePath(path: string): boolean {
  return path.includes('{basePath}');
}

/** A path cut at its parameters: literal text at even indexes, parameter names at odd ones. */
type CompiledPath = readonly string[];

const compiled = new Map<string, CompiledPath>();

/**
 * Cuts a path at its parameters once. Every token request builds its issuer and its DPoP audience from these
 * paths, and a regular-expression replace with a callback per call cost more than the rest of the URL work.
 */
function compile(path: string): CompiledPath {
  let parts = compiled.get(path);
  if (parts === undefined) {
    parts = path.split(/\{(accountId|clientId)\}/);
    compiled.set(path, parts);
  }
  return parts;
}

function fill(path: string, basePath: string, params: PathParams): string {
  const parts = compile(path);
  let filled = parts[0] as string;
  for (let i = 1; i < parts.length; i += 2) {
    const name = parts[i] as keyof PathParams;
    const value = params[name];
    // A missing parameter is a bug in the caller: a URL with a hole would send a browser or a client astray.
    if (value === undefined) throw new TypeError(`route path ${path} needs ${name}`);
    filled += encodeURIComponent(value) + (parts[i + 1] as string);
  }
  return isAbsolutePath(path) ? filled.replace('{basePath}', basePath) : `${basePath}${filled}`;
}

/**
 * The path-absolute URL of a route (`{basePath}…`, without the host's mount prefix), parameters encoded.
 *
 * @example routePath(config, 'login', { accountId: '123' }) // '/sentinel/api/account/123/login'
 */
export function routePath(config: Pick<ResolvedConfig, 'basePath'>, name: RouteName, params: PathParams = {}): string {
  return fill(ROUTE_PATHS[name], config.basePath, params);
}

/**
 * The absolute URL of a route under the issuer, as clients and metadata name it.
 *
 * @example routeUrl(config, 'token', { accountId: '123' }) // 'https://id.example.com/sentinel/api/account/123/token'
 */
export function routeUrl(config: Pick<ResolvedConfig, 'issuer' | 'basePath'>, name: RouteName, params: PathParams = {}): string {
  return `${config.issuer}${routePath(config, name, params)}`;
}

/**
 * The issuer identifier of one account: `{issuer}{basePath}/api/account/{accountId}`.
 *
 * @example accountIssuerUrl(config, '123') // 'https://id.example.com/sentinel/api/account/123'
 */
export function accountIssuerUrl(config: Pick<ResolvedConfig, 'issuer' | 'basePath'>, accountId: string): string {
  return `${config.issuer}${fill(ACCOUNT_PATH, config.basePath, { accountId })}`;
}
