/**
 * What a token-exchange or JWT bearer request may ask for beyond its subject: a narrower `scope` (RFC 6749 §3.3) and
 * a narrower `audience` (RFC 8693 §2.1). Both only ever narrow: a scope token or an audience the subject does not
 * already have is refused, never added.
 */
import { OAuthError, quotedValues } from '../errors.js';
import { single, type ParamMap } from '../http/params.js';
import { requestedScopeTokens, scopeTokens } from './scope-tokens.js';

/**
 * The scope of the new token: all of `allowed` when the request names none, else the requested part of it.
 * `allowed` is the subject's (a delegation) or the app's (a brand JWT), so the refusal names neither.
 * @throws OAuthError invalid_scope for a malformed scope token (not echoed), or naming the tokens that would widen it.
 * @example narrowScope('read write', 'read') // 'read'
 */
export function narrowScope(allowed: string | undefined, requested: string | undefined): string | undefined {
  if (requested === undefined || requested.trim() === '') return allowed;
  const asked = requestedScopeTokens(requested);
  const permitted = new Set(scopeTokens(allowed));
  const refused = asked.filter((token) => !permitted.has(token));
  if (refused.length > 0) throw new OAuthError('invalid_scope', `scope wider than the token may have: ${quotedValues(refused)}`);
  return asked.join(' ');
}

/** Every value of a parameter that may repeat (RFC 8693 §2.1 `audience` and `resource`), empty values left out. */
function repeated(params: ParamMap, name: string): string[] {
  const values = params.get(name);
  if (values === undefined) return [];
  if (values === null) throw new OAuthError('invalid_request', `parameter ${name} is malformed`);
  return values.filter((value) => value !== '');
}

/**
 * The audiences the new token is for by `audience` (RFC 8693 §2.1), each of which must be one the token already
 * has (`allowed`); `undefined` when the request names none. `resource` (RFC 8707) is the service-wide check of
 * `resource-indicators.ts` (`tokenResources`), which the grants call beside this one.
 * @throws OAuthError invalid_target (RFC 8693 §2.2.2) for an audience that would widen the token.
 * @example narrowAudience(params, ['123456']) // ['123456'] for audience=123456, undefined for none
 */
export function narrowAudience(params: ParamMap, allowed: readonly string[]): string[] | undefined {
  const asked = [...new Set(repeated(params, 'audience'))];
  if (asked.length === 0) return undefined;
  if (asked.some((target) => !allowed.includes(target))) {
    throw new OAuthError('invalid_target', 'the requested audience is not one the token would be for');
  }
  return asked;
}

/** The single value of a required parameter. @throws OAuthError invalid_request when it is absent. */
export function requiredParam(params: ParamMap, name: string): string {
  const value = single(params, name);
  if (value === undefined) throw new OAuthError('invalid_request', `parameter ${name} is required`);
  return value;
}
