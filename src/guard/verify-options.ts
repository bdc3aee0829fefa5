/**
 * The options a host passes to `sentinel.verifyAccessToken()` are expectations: a misspelled one (`accountID`) would
 * drop the check it meant, and a token of any account would pass. They are checked on every direct call (the
 * adapters' guards build theirs from known names, so they do not pay for it).
 */
import type { AccessTokenClaims } from '../token/access-token.js';
import type { VerifyAccessTokenOptions } from './access-token-jwt.js';
import { assertKnownKeys, type KeysOf } from '../lib/strict-options.js';

const VERIFY_OPTION_KEYS = {
  accountId: true,
  consumerId: true,
  dpop: true,
  // RFC 8707 (MCP authorization).
  resource: true,
  // RFC 9470 (step-up authentication).
  acrValues: true,
  maxAge: true,
} satisfies KeysOf<VerifyAccessTokenOptions>;

type Verify = (token: string, options?: VerifyAccessTokenOptions) => Promise<AccessTokenClaims>;

/**
 * `verify`, refusing (as a rejected `ConfigurationError`) options it does not know.
 *
 * @example
 * const verifyAccessToken = withKnownVerifyOptions(createAccessTokenVerifier(context, serviceKeys));
 */
export function withKnownVerifyOptions(verify: Verify): Verify {
  return (token, options) => {
    if (options !== undefined) {
      try {
        assertKnownKeys(options, VERIFY_OPTION_KEYS, 'verifyAccessToken');
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return verify(token, options);
  };
}
