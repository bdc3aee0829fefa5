/**
 * `POST {basePath}/api/account/{accountId}/par` — the pushed authorization request endpoint (RFC 9126 §2): an
 * authenticated client posts the parameters of its authorization request, they are validated exactly as the
 * authorization endpoint would, and the client gets a single-use `request_uri` valid for 60 seconds to send the
 * browser with. A DPoP proof on the push binds the code to its key (RFC 9449 §10.1), like `dpop_jkt`.
 */
import { validateAuthorizationRequest } from '../authorize/request/validate-request.js';
import { readForm } from '../http/form-body.js';
import type { SentinelContext } from '../http/context.js';
import { isFapi2, proofInput } from '../assurance/fapi2.js';
import { dpopHeader } from '../dpop/token-binding.js';
import { checkDPoPProof, invalidProof, type VerifiedProof } from '../dpop/proof.js';
import { rememberProof } from '../dpop/proof-replay.js';
import { clientIP } from '../http/client-ip.js';
import { isOAuthError, OAuthError, quotedValues } from '../errors.js';
import { noStoreJSON, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import { authenticateClient } from '../token/client-auth.js';
import { checkTokenQuery } from '../token/token-endpoint.js';
import { REQUEST_URI_TTL_SECONDS, storePushedRequest } from './pushed-requests.js';
import { takePublicPushSlot } from './push-throttle.js';
import { routeUrl } from '../http/route-paths.js';
import { single } from '../http/params.js';

/** Client authentication parameters: they authenticate the push and are not part of the authorization request. */
const AUTHENTICATION_PARAMS = new Set(['client_secret', 'client_assertion', 'client_assertion_type']);

/** A parameter's values, or `undefined` for one sent once without a value (RFC 6749 §3.1: as if omitted). */
function withoutEmpty(values: string[] | null | undefined): string[] | null | undefined {
  return values?.length === 1 && values[0] === '' ? undefined : values;
}

/**
 * Handles a pushed authorization request.
 *
 * @example
 * // POST /sentinel/api/account/123/par  response_type=code&client_id=…&redirect_uri=…&code_challenge=…  (+ client authentication)
 * // 201 {"request_uri":"urn:ietf:params:oauth:request_uri:…","expires_in":60}
 */
export async function handlePushedAuthorizationRequest(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
): Promise<SentinelResponse> {
  checkTokenQuery(request.query);
  const params = await readForm(request, context.config.bodyLimit);
  const { app } = await authenticateClient(context, accountId, request, params, { allowPublic: true });
  if (params.has('request_uri')) throw new OAuthError('invalid_request', 'a pushed request must not contain request_uri');
  // FAPI 2.0 Security Profile §5.3.2.2: the pushed request of a fapi2 app names its redirect URI, even when the app
  // registered only one.
  if (isFapi2(app) && single(params, 'redirect_uri') === undefined) {
    throw new OAuthError('invalid_request', 'redirect_uri is required in the pushed request of a FAPI 2.0 app');
  }
  // The client_id is the authenticated client's: a body's was checked to be that one, or empty, which RFC 6749 §3.1
  // reads as omitted (a push authenticated by Basic or an assertion need not repeat it).
  const pushed: [string, string][] = [['client_id', app.clientId]];
  // A dpop_jkt sent without a value is omitted too (§3.1): with a proof, the proof's key stands in for it.
  const named = withoutEmpty(params.get('dpop_jkt'));
  for (const [name, values] of params) {
    if (AUTHENTICATION_PARAMS.has(name) || name === 'client_id' || (name === 'dpop_jkt' && named === undefined)) continue;
    // The name is the request's own (a host parser's body has any), quoted cut as any value the request sent.
    if (values === null) throw new OAuthError('invalid_request', `parameter ${quotedValues([name])} is malformed`);
    for (const value of values) pushed.push([name, value]);
  }
  const proof = dpopHeader(request);
  let verified: VerifiedProof | undefined;
  if (proof !== undefined) {
    const url = routeUrl(context.config, 'par', { accountId });
    verified = await checkDPoPProof(context, { proof, method: request.method, url, ...proofInput(app, context.config.clockTolerance) });
    const { jkt } = verified;
    if (named !== undefined && (named === null || named.length !== 1 || named[0] !== jkt)) {
      throw invalidProof('dpop_jkt differs from the key of the DPoP proof');
    }
    if (named === undefined) pushed.push(['dpop_jkt', jkt]);
  }
  try {
    const query = new URLSearchParams(pushed);
    await validateAuthorizationRequest(context, { ...request, method: 'GET', query, body: undefined }, accountId, { pushed: true });
  } catch (error) {
    // RFC 9126 §2.3: the errors of the authorization endpoint, as a JSON 400 to the client instead of a redirect.
    if (isOAuthError(error) && error.code !== 'server_error') {
      const code = error.code === 'invalid_client' ? 'invalid_request' : error.code;
      // …except that a push over the authorization request's length cap is a 413, the status §2.3 names for a request
      // beyond the server's bound (the authorization endpoint answers 414, as the parameters are its URL there).
      const tooLarge = error.status === 413 || error.status === 414;
      throw new OAuthError(code, error.description, tooLarge ? { status: 413 } : {});
    }
    // A failure inside (the store, while an id_token_hint reloads the key ring) comes as the authorization
    // endpoint's server_error redirect, a 302: here it is the JSON 500, its cause reported, as for any other.
    if (isOAuthError(error)) throw new OAuthError('server_error', error.description, { status: 500, cause: error.cause ?? error });
    throw error;
  }
  // A public client's caller needs no credential to push, so a good push of one counts against its address before
  // anything is written (par.publicPushesPerAddress, push-throttle.ts): a refused one spends no DPoP proof either.
  const publicClient = app.tokenEndpointAuthMethod === 'none';
  const address = publicClient ? clientIP(context.config, request) : undefined;
  if (address !== undefined) await takePublicPushSlot(context, address);
  // The jti is spent only for a push that is good: a bad push must leave no security state, and a good one of a
  // public client counts against its address (dpop.pushProofsPerAddress).
  if (verified !== undefined) await rememberProof(context, verified, { owner: accountId, push: true, publicClientAddress: address });
  const requestUri = await storePushedRequest(context, { accountId, clientId: app.clientId, params: pushed });
  return noStoreJSON(201, { request_uri: requestUri, expires_in: REQUEST_URI_TTL_SECONDS });
}
