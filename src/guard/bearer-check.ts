/**
 * `sentinel.checkBearer()`: the `Authorization` header of a protected resource's request turned into verified
 * claims or the answer to send (RFC 6750 §3, RFC 9449 §7.1). A token that cannot be *checked* (the store failed) is
 * neither accepted nor called invalid: it gets a 503 and the cause goes to `onError`.
 */
import type { AccessTokenClaims } from '../token/access-token.js';
import { type KnownLive, verifyCachedAccessToken, type VerifyAccessTokenOptions } from './access-token-jwt.js';
import { appPresence } from './app-presence.js';
import { assertResourceOption, bearerCandidate, PLAIN_BEARER, withoutProof } from './bearer-request.js';
import {
  challengeScheme,
  credentialsChallenge,
  malformedAuthorization,
  parseAuthorization,
  resourceChallenge,
  usesTokenScheme,
} from '../http/authorization-scheme.js';
import { joinsSeveralCredentials, SEVERAL_CREDENTIALS } from '../http/authorization-field.js';
import type { SentinelContext } from '../http/context.js';
import { type DPoPPresentation, presentationOf, type ResourceRequest } from '../dpop/resource.js';
import { isConfigurationError, isOAuthError, OAuthError, wireDescription } from '../errors.js';
import { noStoreJSON, type SentinelResponse } from '../http/messages.js';
import type { ServiceKeys } from '../keys/keyring/service-keys.js';
import type { AccessTokenVerifier } from './access-token-verifier.js';
import { protectedResourceMetadataURL } from './protected-resource-metadata.js';
import { assertScopesOption } from './scope-requirement.js';
import { stepUpRequirement } from '../assurance/step-up-challenge.js';

/** The metadata URL of a guard's resource, computed once per resource (a guard names one; hosts have a few). */
const metadataURLs = new Map<string, string>();

function resourceMetadataURL(resource: string): string {
  let url = metadataURLs.get(resource);
  if (url === undefined) {
    url = protectedResourceMetadataURL(resource);
    if (metadataURLs.size < 1000) metadataURLs.set(resource, url);
  }
  return url;
}

/**
 * Outcome of a bearer check: the verified claims, or the answer to send: a 401 (400 for two credentials, RFC 6750
 * §3.1) whose `WWW-Authenticate` names the scheme the request used (`Bearer`, RFC 6750 §3, or `DPoP`, RFC 9449
 * §7.1), and both to a request without a token.
 *
 * @example
 * const result = await sentinel.checkBearer(req.headers.authorization, { accountId, consumerId });
 * if (!result.ok) return send(result.response);
 * use(result.claims.sub);
 */
export type BearerResult = { ok: true; claims: AccessTokenClaims } | { ok: false; response: SentinelResponse };

/** Checks one `Authorization` header value; see `Sentinel.checkBearer`. */
export type BearerCheck = (
  authorization: string | undefined,
  options?: VerifyAccessTokenOptions,
  resource?: ResourceRequest,
) => Promise<BearerResult>;

/** Errors a protected resource answers with a challenge: 401, and 403 for `insufficient_scope` (RFC 6750 §3.1, RFC 9449 §7.1). */
const RESOURCE_ERRORS = new Set([
  'invalid_token',
  'invalid_dpop_proof',
  'use_dpop_nonce',
  'insufficient_user_authentication',
  'insufficient_scope',
]);

/** What a bearer guard answers when the token cannot be checked right now (the store failed). */
function bearerUnavailable(): SentinelResponse {
  return noStoreJSON(503, { error: 'server_error', error_description: 'the access token could not be checked' }, { 'retry-after': '1' });
}

/** The refusal's answer; built on failures only, so `authorization` is read for its scheme here and not before. */
function bearerChallenge(
  error: OAuthError | undefined,
  resource: string | undefined,
  authorization: string | undefined,
  algorithms: readonly string[],
): SentinelResponse {
  // DPoP failures carry their own `WWW-Authenticate: DPoP` challenge (and maybe a DPoP-Nonce), step-up refusals
  // their RFC 9470 one and scope refusals their RFC 6750 §3.1 one (403), already in the scheme the request used.
  const own = error?.headers['www-authenticate'];
  if (error !== undefined && own !== undefined) {
    const status = error.code === 'insufficient_scope' ? 403 : 401;
    if (resource === undefined) return noStoreJSON(status, error.toJSON(), { ...error.headers });
    // RFC 9728 §5.1 holds for each of the resource's challenges: a client that must step up, ask for more scope, or
    // whose proof failed, may be one that has not read the metadata yet.
    const challenge = `${own}, resource_metadata="${resourceMetadataURL(resource)}"`;
    return noStoreJSON(status, error.toJSON(), { ...error.headers, 'www-authenticate': challenge });
  }
  // RFC 9728 §5.1: a guard for a named resource tells the client where its metadata is, so an MCP client can find
  // the authorization server from the 401 alone.
  const metadata = resource === undefined ? '' : `, resource_metadata="${resourceMetadataURL(resource)}"`;
  // No credentials for the resource: either scheme will do, so both are offered (RFC 9449 §7.1).
  if (error === undefined) {
    const body = { error: 'invalid_token', error_description: 'an access token is required' };
    return noStoreJSON(401, body, { 'www-authenticate': credentialsChallenge(algorithms, metadata) });
  }
  // A token refused for any other reason (expired, malformed, foreign) is refused in the scheme it came with: a DPoP
  // client reads the DPoP challenge, with the algs it may sign proofs with (RFC 9449 §7.1).
  const params = `${metadata}, error="${error.code}", error_description="${wireDescription(error.description)}"`;
  const status = error.code === 'invalid_request' ? 400 : 401;
  return noStoreJSON(status, error.toJSON(), { 'www-authenticate': resourceChallenge(challengeScheme(authorization), algorithms, params) });
}

/**
 * The verifier's options for one presentation on the full path: each expectation read from the host's object by name,
 * as the cached path reads it (`verifyCachedAccessToken`), and not spread: a spread copies own enumerable properties
 * only, so an expectation the object inherits or answers from a getter (a class with `get accountId()`) was compared
 * on a cache hit and dropped on a miss, where a token of another account passed. Every key is listed (the mapped type
 * fails to compile when one is added to the options and not here).
 */
function presentedOptions(options: VerifyAccessTokenOptions, dpop: DPoPPresentation): VerifyAccessTokenOptions {
  const presented: { [K in keyof Required<VerifyAccessTokenOptions>]: VerifyAccessTokenOptions[K] } = {
    accountId: options.accountId,
    consumerId: options.consumerId,
    dpop: options.dpop ?? dpop,
    resource: options.resource,
    acrValues: options.acrValues,
    maxAge: options.maxAge,
    scopes: options.scopes,
  };
  return presented;
}

/**
 * Builds the bearer check over the service's verifier; `report` receives what could not be checked (route `bearer`).
 */
export function createBearerCheck(
  context: SentinelContext,
  serviceKeys: ServiceKeys,
  verifyAccessToken: AccessTokenVerifier,
  report: (error: unknown, route: string, accountId: string | undefined) => void,
): BearerCheck {
  const { ring, accountRings } = serviceKeys;
  const presence = appPresence(context);
  // The guard's synchronous hit path asks the presence cache only; an app it does not know takes the full path.
  const isKnownLive: KnownLive = (accountId, clientId) => presence.isKnownPresent(accountId, clientId);
  /** True when the keys in use need no (re)load first: no ring, or a single ring loaded recently. */
  const keysSettled = (): boolean => ring === undefined || (accountRings === undefined && ring.fresh() === undefined);

  const { algorithms } = context.config.dpop;

  function refusal(error: unknown, verifyOptions: VerifyAccessTokenOptions, authorization: string | undefined): BearerResult {
    if (isOAuthError(error) && RESOURCE_ERRORS.has(error.code)) {
      return { ok: false, response: bearerChallenge(error, verifyOptions.resource, authorization, algorithms) };
    }
    // A guard set up wrong (a resource without an authorization server) is the host's to fix, as an unknown option
    // is: the promise rejects, where a 503 would have the client retry a request that can never pass.
    if (isConfigurationError(error)) throw error;
    // No room for the proof's replay marker: 429 with the proof window as Retry-After, as the token endpoint answers,
    // not the 503 of a store that failed (the store works; it is full of live markers).
    if (isOAuthError(error) && error.code === 'temporarily_unavailable') {
      return { ok: false, response: noStoreJSON(error.status, error.toJSON(), { ...error.headers }) };
    }
    // The grant could not be read (store down): the token is neither accepted nor called invalid. The cause goes
    // to onError like every other store failure, and every adapter sends the same stack-free 503.
    report(error, 'bearer', verifyOptions.accountId);
    return { ok: false, response: bearerUnavailable() };
  }

  return async (authorization, verifyOptions = {}, resource) => {
    // A host calling checkBearer directly gets the refusal requireAccessToken gives at creation, not a TypeError from
    // building the metadata URL of a 401 (or a token refused for a resource no request could name).
    if (verifyOptions.resource !== undefined) assertResourceOption(verifyOptions.resource, 'checkBearer');
    // The same for scopes; the guards pass a list checked once (scope-requirement.ts), so this is a set lookup.
    if (verifyOptions.scopes !== undefined) assertScopesOption(verifyOptions.scopes, 'checkBearer');
    // And for a step-up requirement no token could meet, under this entry point's name, whatever the token.
    if (verifyOptions.acrValues !== undefined || verifyOptions.maxAge !== undefined) stepUpRequirement(verifyOptions, 'checkBearer');
    // A token verified before, presented as Bearer without a proof, with no key reload due: answered from the
    // verified-token cache without awaiting anything (every check that can change still runs, access-token-jwt.ts).
    const candidate = bearerCandidate(authorization);
    try {
      if (candidate !== undefined && withoutProof(resource) && verifyOptions.dpop === undefined && keysSettled()) {
        const claims = verifyCachedAccessToken(context, candidate, verifyOptions, isKnownLive);
        if (claims !== undefined) return { ok: true, claims };
      }
    } catch (error) {
      return refusal(error, verifyOptions, authorization);
    }
    const found = authorization === undefined ? null : parseAuthorization(authorization);
    // The same characters as the lookup above: carry on with that string, whose hash V8 has computed and kept, so
    // the verified-token cache does not hash the token (hundreds of characters) once more to look it up and store it.
    if (found !== null && found.token === candidate) found.token = candidate;
    if (found === null) {
      // RFC 6750 §3.1: two credentials (two lines, which the adapters join with `, `, or one with a comma) are
      // invalid_request, not a malformed token: the request, not the token, is at fault. Checked on refusal only.
      if (authorization !== undefined && joinsSeveralCredentials(authorization)) {
        const error = new OAuthError('invalid_request', SEVERAL_CREDENTIALS, { status: 400 });
        return { ok: false, response: bearerChallenge(error, verifyOptions.resource, authorization, algorithms) };
      }
      return {
        ok: false,
        response:
          authorization === undefined || !usesTokenScheme(authorization)
            ? bearerChallenge(undefined, verifyOptions.resource, authorization, algorithms)
            : bearerChallenge(
                new OAuthError('invalid_token', malformedAuthorization(authorization), { status: 401 }),
                verifyOptions.resource,
                authorization,
                algorithms,
              ),
      };
    }
    try {
      const { scheme, token } = found;
      // Without the resource request a DPoP presentation has no proof to check, and a bound token is refused; a
      // Bearer presentation without a DPoP header needs nothing of the request.
      const dpop =
        resource === undefined
          ? { scheme, method: '', url: '' }
          : scheme === 'Bearer' && withoutProof(resource)
            ? PLAIN_BEARER
            : presentationOf(context, scheme, resource);
      return { ok: true, claims: await verifyAccessToken(token, presentedOptions(verifyOptions, dpop)) };
    } catch (error) {
      return refusal(error, verifyOptions, authorization);
    }
  };
}
