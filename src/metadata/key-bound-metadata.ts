/**
 * The RFC 8414 metadata of DPoP (RFC 9449 §5.1), key-based client authentication (RFC 7523, OIDC Discovery) and
 * pushed authorization requests (RFC 9126 §5), merged into each account's metadata document.
 */
import type { SentinelContext } from '../http/context.js';
import { ASYMMETRIC_ALGORITHMS } from '../keys/jwk-public.js';
import { routeUrl } from '../http/route-paths.js';

const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'];

/**
 * The members for the issuer of one account. RFC 8414 §2: each `…_endpoint_auth_signing_alg_values_supported` MUST be
 * present when its endpoint's methods list `private_key_jwt`, since no default algorithms are implied. One verifier checks the assertions of all three
 * (client-assertion/verify-assertion.ts), so the lists are the same.
 * @example { ...authorizationServerMetadata(context, accountId) } // includes these
 */
export function keyBoundMetadata(context: SentinelContext, accountId: string): Record<string, unknown> {
  return {
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    token_endpoint_auth_signing_alg_values_supported: [...ASYMMETRIC_ALGORITHMS],
    revocation_endpoint_auth_methods_supported: AUTH_METHODS,
    revocation_endpoint_auth_signing_alg_values_supported: [...ASYMMETRIC_ALGORITHMS],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    introspection_endpoint_auth_signing_alg_values_supported: [...ASYMMETRIC_ALGORITHMS],
    dpop_signing_alg_values_supported: [...context.config.dpop.algorithms],
    pushed_authorization_request_endpoint: routeUrl(context.config, 'par', { accountId }),
    require_pushed_authorization_requests: false,
  };
}
