/**
 * How the adapters' `requireAccessToken` guards read their expectations from route parameters.
 */
import type { VerifyAccessTokenOptions } from './access-token.js';

/**
 * Options of every adapter's `requireAccessToken(sentinel, options)`: which route parameters must match the bearer
 * token (RFC 6750 §2.1 tokens, checked as RFC 9068 §4 asks: issuer, audience, and here the consumer).
 *
 * @example
 * const guard = requireAccessToken(sentinel, { accountParam: 'tenant', consumerParam: 'consumer' });
 * app.get('/api/tenants/:tenant/consumers/:consumer', guard, handler);
 */
export interface RequireAccessTokenOptions {
  /** Route parameter that must equal the token's account; `false` to skip. Default `accountId`. */
  accountParam?: string | false;
  /** Route parameter that must equal the token's consumer; `false` to skip. Default `consumerId`. */
  consumerParam?: string | false;
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
  const read = (name: string | false | undefined, fallback: string): string | undefined => {
    const key = name === undefined ? fallback : name;
    if (key === false || params === undefined) return undefined;
    const value = params[key];
    return typeof value === 'string' ? value : undefined;
  };
  return { accountId: read(options.accountParam, 'accountId'), consumerId: read(options.consumerParam, 'consumerId') };
}
