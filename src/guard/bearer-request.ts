/**
 * The bearer guard's request-side parts: reading the `Authorization` header, and how the adapters'
 * `requireAccessToken` guards read their expectations from route parameters. Both run on every guarded request, so
 * they allocate as little as they can.
 */
import type { VerifyAccessTokenOptions } from './access-token-jwt.js';
import type { DPoPPresentation, ResourceRequest } from '../dpop/resource.js';
import { assertKnownKeys, type KeysOf } from '../lib/strict-options.js';
import { resourceURIProblem } from '../token/resource-indicators.js';
import { ConfigurationError } from '../errors.js';
import { stepUpRequirement } from '../assurance/step-up-challenge.js';
import { checkedScopes } from './scope-requirement.js';

/**
 * Options of every adapter's `requireAccessToken(sentinel, options)`: which route parameters must match the bearer
 * token (RFC 6750 §2.1 tokens, checked as RFC 9068 §4 asks: issuer, audience, and here the consumer).
 *
 * @example
 * const guard = requireAccessToken(sentinel, { accountParam: 'tenant', consumerParam: 'consumer' });
 * app.get('/api/tenants/:tenant/consumers/:consumer', guard, handler);
 */
export interface RequireAccessTokenOptions {
  /**
   * Route parameter that must equal the token's account; `false` to skip. Default `accountId`, compared when the
   * route has it. A name given here must be one of the route's parameters: a request whose route lacks it is refused
   * with a `ConfigurationError` rather than left unchecked.
   */
  accountParam?: string | false;
  /** Route parameter that must equal the token's consumer; `false` to skip. Default `consumerId`, as `accountParam`. */
  consumerParam?: string | false;
  // RFC 8707 and RFC 9728 (MCP authorization, issue #33).
  /**
   * The protected resource this route belongs to (an RFC 8707 URI, e.g. the MCP server's URL): the token's `aud` must
   * contain it, its issuer must be the account the resource's protected resource metadata names (RFC 9068 §4; build
   * the metadata with `sentinel.protectedResourceMetadata({ resource, accountId })`), and every 401 names that
   * metadata (`resource_metadata`, RFC 9728 §5.1), its step-up and DPoP challenges included.
   */
  resource?: string | undefined;
  // RFC 9470 (step-up authentication, issue #34).
  /**
   * The `acr` values this route accepts (space-separated or a list of `urn:sentinel:acr:…`): a token below the weakest
   * gets 401 `WWW-Authenticate: Bearer error="insufficient_user_authentication", …, acr_values="…"`.
   */
  acrValues?: string | readonly string[] | undefined;
  /** Seconds since the user's sign-in beyond which a token gets the same 401 with `max_age="…"`. */
  maxAge?: number | undefined;
  // RFC 6750 §3.1 (MCP scope challenge handling).
  /**
   * Scopes a token must all carry (RFC 6749 §3.3 scope tokens, at least one; checked when the guard is created). A
   * token that is otherwise valid but lacks one gets 403 `WWW-Authenticate: Bearer error="insufficient_scope", …,
   * scope="…"` naming all of them (and `resource_metadata` with a `resource`), so the client can ask for them.
   * @example requireAccessToken(sentinel, { resource: 'https://mcp.example.com/mcp', scopes: ['files:write'] })
   */
  scopes?: readonly string[] | undefined;
}

const REQUIRE_ACCESS_TOKEN_KEYS = {
  accountParam: true,
  consumerParam: true,
  // RFC 8707 (MCP authorization).
  resource: true,
  // RFC 9470 (step-up authentication).
  acrValues: true,
  maxAge: true,
  // RFC 6750 §3.1 (insufficient_scope).
  scopes: true,
} satisfies KeysOf<RequireAccessTokenOptions>;

/** Resources already found to be resource indicators (a host's guards name a few; bounded all the same). */
const validResources = new Set<string>();

/**
 * Throws the `ConfigurationError` of `owner.resource` unless `resource` is a resource indicator (RFC 8707 §2): the
 * one check of `requireAccessToken` (once, at creation) and of a direct `sentinel.checkBearer()` (each call, cached).
 * @example assertResourceOption(options.resource, 'checkBearer');
 */
export function assertResourceOption(resource: unknown, owner: string): void {
  if (typeof resource === 'string' && validResources.has(resource)) return;
  const problem = typeof resource === 'string' ? resourceURIProblem(resource) : 'must be a string';
  if (problem !== null) throw new ConfigurationError(`${owner}.resource`, problem);
  if (validResources.size < 1000) validResources.add(resource as string);
}

/** Reads a guard's expectations from one request's route parameters (see {@link expectationsReader}). */
export type ExpectationsReader = (params: Record<string, unknown> | undefined) => VerifyAccessTokenOptions;

/**
 * The reader of a guard's expectations, resolved once when the guard is created: the parameter names are fixed by
 * then, so a request costs two property reads and one small object.
 * @example const read = expectationsReader({ consumerParam: 'consumer' }); read(req.params) // { accountId: …, consumerId: … }
 */
export function expectationsReader(options: RequireAccessTokenOptions = {}): ExpectationsReader {
  // Once per guard: a misspelled `consumerparam` would leave the default parameter checked, not the one meant.
  assertKnownKeys(options, REQUIRE_ACCESS_TOKEN_KEYS, 'requireAccessToken');
  const account = paramOf(options.accountParam, 'accountId', 'accountParam');
  const consumer = paramOf(options.consumerParam, 'consumerId', 'consumerParam');
  const { resource } = options;
  if (resource !== undefined) assertResourceOption(resource, 'requireAccessToken');
  // Checked once here: a value no token can meet is a setup error, not a 401 on every request.
  const stepUp = stepUpRequirement(options, 'requireAccessToken');
  const scopes = options.scopes === undefined ? undefined : checkedScopes(options.scopes, 'requireAccessToken');
  if (stepUp !== undefined || scopes !== undefined) {
    const { acrValues, maxAge } = stepUp ?? {};
    const read = readerOf(account, consumer, resource);
    return (params) => {
      const expected = read(params);
      if (acrValues !== undefined) expected.acrValues = acrValues;
      if (maxAge !== undefined) expected.maxAge = maxAge;
      if (scopes !== undefined) expected.scopes = scopes;
      return expected;
    };
  }
  return readerOf(account, consumer, resource);
}

/** A route parameter a guard compares with the token: its name, and whether the host named it (not the default). */
interface RouteParam {
  key: string;
  named: boolean;
  field: string;
}

function paramOf(option: string | false | undefined, fallback: string, name: string): RouteParam | undefined {
  if (option === false) return undefined;
  return { key: option ?? fallback, named: option !== undefined, field: `requireAccessToken.${name}` };
}

/**
 * The value of the route parameter `param` names, `undefined` when there is nothing to compare: a default name the
 * route does not have, or an optional parameter the request left out.
 * @throws ConfigurationError when the parameter cannot be compared: a name the host gave that the route does not have
 *   (`accountParam: 'tenantId'` on `/:tenant`), or a value that is not one string (a wildcard's list). Leaving the
 *   check out instead would let a token of any account or consumer through that route.
 */
function routeValue(params: Record<string, unknown> | undefined, param: RouteParam | undefined): string | undefined {
  if (param === undefined) return undefined;
  if (params === undefined || !Object.hasOwn(params, param.key)) {
    if (!param.named) return undefined;
    throw new ConfigurationError(param.field, `the guarded route has no parameter "${param.key}" to compare with the token`);
  }
  const value = params[param.key];
  if (value === undefined || typeof value === 'string') return value;
  throw new ConfigurationError(
    param.field,
    `the route parameter "${param.key}" is not one string, so it cannot be compared with the token`,
  );
}

function readerOf(account: RouteParam | undefined, consumer: RouteParam | undefined, resource: string | undefined): ExpectationsReader {
  return (params) => {
    const expected: VerifyAccessTokenOptions = { accountId: routeValue(params, account), consumerId: routeValue(params, consumer) };
    if (resource !== undefined) expected.resource = resource;
    return expected;
  };
}

/**
 * The account and consumer a request's route parameters require, for `sentinel.checkBearer()` (RFC 6750 §3.1:
 * a token for another account or consumer is `invalid_token`).
 * @example expectationsFromParams({ accountId: '123', consumerId: 'c' }) // { accountId: '123', consumerId: 'c' }
 */
export function expectationsFromParams(
  params: Record<string, unknown> | undefined,
  options: RequireAccessTokenOptions = {},
): VerifyAccessTokenOptions {
  return expectationsReader(options)(params);
}

/**
 * The token of a plain `Bearer <token>` header, read without a regular expression, for a cache lookup only: the
 * slice is not validated here, so only an exact match with a token that was verified before may be trusted (a
 * verified token is a compact JWS, within the characters `parseAuthorization` (http/authorization-scheme.ts)
 * accepts).
 * @example const candidate = bearerCandidate(header); if (candidate !== undefined) lookUp(candidate);
 */
export function bearerCandidate(authorization: string | undefined): string | undefined {
  return authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
}

/** The presentation of a Bearer token on a request without a DPoP header: nothing of the request is needed. */
export const PLAIN_BEARER: DPoPPresentation = Object.freeze({ scheme: 'Bearer', method: '', url: '' });

/**
 * Whether a request carries no DPoP proof, so a Bearer presentation of it is {@link PLAIN_BEARER}: a bound token
 * sent as Bearer is refused without looking at the method or URL (RFC 9449 §7.1).
 * @example if (scheme === 'Bearer' && withoutProof(resource)) dpop = PLAIN_BEARER;
 */
export function withoutProof(resource: ResourceRequest | undefined): boolean {
  return resource === undefined || resource.headers.dpop === undefined;
}
