/**
 * The options a host passes to `sentinel.verifyAccessToken()` and `sentinel.checkBearer()` are expectations: a
 * misspelled one (`accountID`) would drop the check it meant, and a token of any account would pass. They are checked
 * on every call. The adapters' guards call `checkBearer` on every request with options built from known names, so
 * its check is a walk over the object's own keys, and the full one (with its "did you mean") runs only on a miss.
 */
import type { AccessTokenClaims } from '../token/access-token.js';
import type { VerifyAccessTokenOptions } from './access-token-jwt.js';
import type { BearerCheck } from './bearer-check.js';
import { assertKnownKeys, type KeysOf } from '../lib/strict-options.js';
import { assertResourceOption } from './bearer-request.js';
import { assertScopesOption } from './scope-requirement.js';
import { stepUpRequirement } from '../assurance/step-up-challenge.js';

const VERIFY_OPTION_KEYS = {
  accountId: true,
  consumerId: true,
  dpop: true,
  // RFC 8707 (MCP authorization).
  resource: true,
  // RFC 9470 (step-up authentication).
  acrValues: true,
  maxAge: true,
  // RFC 6750 §3.1 (insufficient_scope).
  scopes: true,
} satisfies KeysOf<VerifyAccessTokenOptions>;

type Verify = (token: string, options?: VerifyAccessTokenOptions) => Promise<AccessTokenClaims>;

/**
 * The refusal of `options` naming a key the verification does not know, as a rejected `ConfigurationError`, or
 * `undefined` when every key is known. A walk over the object's own keys first; the full check (with its "did you
 * mean") only on a miss, since the adapters' guards pass their options on every request.
 */
function unknownOptions(options: VerifyAccessTokenOptions | undefined, field: string): Promise<never> | undefined {
  if (options === undefined) return undefined;
  let known = true;
  for (const key in options) known &&= Object.hasOwn(VERIFY_OPTION_KEYS, key);
  if (known) return undefined;
  try {
    assertKnownKeys(options, VERIFY_OPTION_KEYS, field);
    return undefined;
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * `verify`, refusing (as a rejected `ConfigurationError`) options it does not know.
 *
 * @example
 * const verifyAccessToken = withKnownVerifyOptions(createAccessTokenVerifier(context, serviceKeys));
 */
export function withKnownVerifyOptions(verify: Verify): Verify {
  return (token, options) => unknownOptions(options, 'verifyAccessToken') ?? malformedOptions(options) ?? verify(token, options);
}

/**
 * The refusal of a `resource` expectation that is no resource indicator, as `checkBearer` refuses it: compared with
 * `aud` as it is, a value a resource-bound token cannot carry (the account id, which is the account's audience) would
 * otherwise take the account's own tokens for the resource's. And of `scopes` that are no list of scope tokens, and
 * of `acrValues` or `maxAge` no token could meet: refused whatever the token, not only once a good one comes.
 */
function malformedOptions(options: VerifyAccessTokenOptions | undefined): Promise<never> | undefined {
  if (options === undefined) return undefined;
  const { resource, scopes, acrValues, maxAge } = options;
  if (resource === undefined && scopes === undefined && acrValues === undefined && maxAge === undefined) return undefined;
  try {
    if (resource !== undefined) assertResourceOption(resource, 'verifyAccessToken');
    // A list no token can meet (or an empty one, which requires nothing) is the host's mistake, not a 403.
    if (scopes !== undefined) assertScopesOption(scopes, 'verifyAccessToken');
    stepUpRequirement(options, 'verifyAccessToken');
    return undefined;
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * `check`, refusing (as a rejected `ConfigurationError`) options it does not know, as {@link withKnownVerifyOptions}.
 *
 * @example
 * const checkBearer = withKnownBearerOptions(createBearerCheck(context, serviceKeys, verify, report));
 */
export function withKnownBearerOptions(check: BearerCheck): BearerCheck {
  return (authorization, options, resource) => unknownOptions(options, 'checkBearer') ?? check(authorization, options, resource);
}
