/**
 * The scopes a protected resource requires of an access token (RFC 6750 §3.1): every one listed must be among the
 * token's `scope`, else the resource answers 403 with the challenge a client re-authorizes from (MCP authorization's
 * scope challenge handling):
 *
 * `WWW-Authenticate: Bearer error="insufficient_scope", error_description="…", scope="files:read files:write"`
 *
 * in the scheme the token came with (`DPoP algs="…", error="insufficient_scope", …` for a DPoP one), as the RFC 9470
 * step-up refusal is. The guard adds `resource_metadata` (RFC 9728 §5.1) when it names a resource.
 */
import { ConfigurationError, OAuthError, wireDescription } from '../errors.js';
import { isScopeToken } from '../token/scope-tokens.js';

/** Lists already found to be well-formed: the adapters' guards pass the same frozen list on every request. */
const checked = new WeakSet<readonly string[]>();

/**
 * Throws a `ConfigurationError` naming `${field}.scopes` unless `scopes` is a non-empty list of RFC 6749 §3.3 scope
 * tokens: an empty list would require nothing while looking like a requirement, and a token with a space or a quote
 * could never be in a `scope` claim (nor be written into the challenge).
 * @example assertScopesOption(['files:read'], 'requireAccessToken'); // passes; [] or ['a b'] throws
 */
export function assertScopesOption(scopes: unknown, field: string): void {
  if (typeof scopes === 'object' && scopes !== null && checked.has(scopes as readonly string[])) return;
  if (!Array.isArray(scopes) || scopes.length === 0) {
    throw new ConfigurationError(`${field}.scopes`, 'must be a non-empty list of scope tokens');
  }
  if (!scopes.every((scope) => typeof scope === 'string' && isScopeToken(scope))) {
    throw new ConfigurationError(`${field}.scopes`, 'must list RFC 6749 scope tokens (printable ASCII, no space, quote or backslash)');
  }
  if (Object.isFrozen(scopes)) checked.add(scopes);
}

/**
 * A frozen copy of `scopes` after {@link assertScopesOption}, for a guard to pass on every request unchecked again.
 * @example const scopes = checkedScopes(options.scopes, 'requireAccessToken');
 */
export function checkedScopes(scopes: unknown, field: string): readonly string[] {
  assertScopesOption(scopes, field);
  const copy = Object.freeze([...(scopes as readonly string[])]);
  checked.add(copy);
  return copy;
}

/**
 * Throws the RFC 6750 §3.1 `insufficient_scope` refusal (403) when the token's `scope` lacks any of `required`; the
 * challenge names every required scope (what the client must ask for), in the presentation's scheme. A token without
 * a `scope` (an app registered with none) has no scope.
 * @example checkScopes(claims, ['files:read'], 'Bearer', config.dpop.algorithms);
 */
export function checkScopes(
  claims: { scope?: unknown },
  required: readonly string[],
  scheme: 'Bearer' | 'DPoP',
  algorithms: readonly string[],
): void {
  const granted = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
  if (required.every((scope) => granted.includes(scope))) return;
  const description = 'the access token lacks a scope this resource requires';
  const start = scheme === 'DPoP' ? `DPoP algs="${algorithms.join(' ')}",` : 'Bearer';
  const challenge = `${start} error="insufficient_scope", error_description="${wireDescription(description)}", scope="${required.join(' ')}"`;
  throw new OAuthError('insufficient_scope', description, { status: 403, headers: { 'www-authenticate': challenge } });
}
