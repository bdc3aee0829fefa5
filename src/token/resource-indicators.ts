/**
 * Resource indicators (RFC 8707): which protected resources a token is for. A client names them with `resource` at
 * the authorization endpoint (bound to the code), at the token endpoint for every grant, and at the PAR endpoint;
 * the access token's `aud` is then those resources instead of the account's audience, so a token asked for one MCP
 * server is refused by every other resource server, the account's own API included.
 *
 * Every grant asks {@link tokenResources}: the one check of the `resource` parameter at a token endpoint, so that a
 * new grant (token exchange) cannot drift from the others.
 */
import type { App } from '../apps/app.js';
import { resourceURIProblem } from '../apps/resource-uri.js';
import { OAuthError } from '../errors.js';
import type { SentinelContext } from '../http/context.js';
import type { ParamMap } from '../http/params.js';

export { resourceURIProblem };

/** More resources than this in one request is not a client naming its servers: refused before anything is compared. */
const MAX_RESOURCES = 10;

/**
 * The resources an app may ask tokens for: its own `resources`, else the service's `defaultResources`.
 * @example allowedResources(context, app).includes('https://mcp.example.com/mcp')
 */
export function allowedResources(context: SentinelContext, app: App): readonly string[] {
  return app.resources ?? context.config.defaultResources;
}

/**
 * The `resource` values of a request, each checked as RFC 8707 §2 asks (absolute, no fragment), without duplicates;
 * empty when there is none. A `resource` without a value is left out (RFC 6749 §3.1: treated as omitted), as every
 * other parameter and `audience` are. A problem is returned as its description, for the caller to raise as
 * `invalid_target` its own way (a redirect at the authorization endpoint, JSON at the token endpoint).
 *
 * @example
 * const read = readResources(params); if (typeof read === 'string') throw new OAuthError('invalid_target', read);
 */
export function readResources(params: ParamMap): string[] | string {
  const given = params.get('resource');
  if (given === undefined) return [];
  if (given === null) return 'parameter resource is malformed';
  const values = given.filter((value) => value !== '');
  if (values.length > MAX_RESOURCES) return `at most ${MAX_RESOURCES} resource parameters are accepted`;
  for (const value of values) {
    const problem = resourceURIProblem(value);
    // The value itself is not echoed: it is the client's text, of any length.
    if (problem !== null) return `resource ${problem}`;
  }
  return [...new Set(values)];
}

/**
 * Why `resources` may not be asked by `app`, or `null` when they may: each must be one the app is allowed
 * ({@link allowedResources}) and, when `granted` is given (a code's or a grant's resources), one of those.
 *
 * @example resourceProblem(context, app, ['https://mcp.example.com/mcp']) // null, or 'resource … is not …'
 */
export function resourceProblem(
  context: SentinelContext,
  app: App,
  resources: readonly string[],
  granted?: readonly string[],
): string | null {
  const allowed = allowedResources(context, app);
  for (const resource of resources) {
    if (!allowed.includes(resource)) return 'a requested resource is not one this application may ask tokens for';
    if (granted !== undefined && !granted.includes(resource)) return 'a requested resource was not granted by the authorization';
  }
  return null;
}

/**
 * The resources a token request's access token is for (RFC 8707 §2.2): the request's `resource` values, which must
 * be allowed for the app and, for a grant that carries resources (`granted`: those of the code or refresh grant,
 * `[]` when it carries none), among them; without a `resource`, the grant's. `undefined`: the token is for the
 * account's own audience.
 *
 * @throws OAuthError invalid_target (400) for a malformed, unknown or ungranted resource.
 * @example
 * const resources = tokenResources(context, app, params, record.resources ?? []);
 * await issueAccessToken(context, { …, resources });
 */
export function tokenResources(
  context: SentinelContext,
  app: App,
  params: ParamMap,
  granted?: readonly string[] | undefined,
): string[] | undefined {
  const requested = readResources(params);
  if (typeof requested === 'string') throw new OAuthError('invalid_target', requested);
  // Nothing asked and nothing granted (most requests): the account's own audience, with nothing to check.
  if (requested.length === 0 && (granted === undefined || granted.length === 0)) return undefined;
  const chosen = requested.length > 0 ? requested : [...(granted ?? [])];
  // The grant's own resources are checked again too: an operator may have taken one from the app since.
  const problem = resourceProblem(context, app, chosen, granted);
  if (problem !== null) throw new OAuthError('invalid_target', problem);
  return chosen.length === 0 ? undefined : chosen;
}
