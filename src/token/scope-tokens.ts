/**
 * The `scope` parameter of a token request, read as RFC 6749 §3.3 writes it: scope tokens of %x21 / %x23-5B /
 * %x5D-7E, separated by spaces. The grants that narrow a scope name the tokens they refuse; a token outside these
 * characters is refused before that, with a fixed description, because RFC 6749 §5.2 allows `error_description` only
 * %x20-21 / %x23-5B / %x5D-7E and the client's text (a tab, a quote, a backslash, non-ASCII) is not to be echoed.
 */
import type { App } from '../apps/app.js';
import { OAuthError } from '../errors.js';

/** RFC 6749 §3.3 `scope-token`: within the §5.2 `error_description` characters, so a checked token may be named. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * Whether `token` is one RFC 6749 §3.3 scope token (no space, quote or backslash, printable ASCII).
 * @example isScopeToken('mcp:tools') // true; isScopeToken('two words') // false
 */
export function isScopeToken(token: string): boolean {
  return SCOPE_TOKEN.test(token);
}

/** The scope tokens of a space-separated scope, empty ones (doubled spaces) left out. */
export function scopeTokens(scope: string | undefined): string[] {
  return (scope ?? '').split(' ').filter((token) => token !== '');
}

/**
 * The distinct scope tokens a request names, each checked against RFC 6749 §3.3. The description is plain ASCII
 * (§5.2), so it names no RFC section either.
 * @throws OAuthError invalid_scope, without the request's text, for a token outside the §3.3 characters.
 * @example requestedScopeTokens('read read write') // ['read', 'write']; 'read\tx' throws
 */
export function requestedScopeTokens(requested: string): string[] {
  const asked = [...new Set(scopeTokens(requested))];
  if (asked.some((token) => !SCOPE_TOKEN.test(token))) {
    throw new OAuthError('invalid_scope', 'scope must be space-separated scope tokens');
  }
  return asked;
}

/**
 * A granted scope as the app may still have it: an operator may have narrowed the app's `scope` since the user
 * authorized it (while the code was pending, or since the grant was made), and a code exchange or a refresh issues
 * what the authorization endpoint would allow now (the app's scope and `openid`), as they re-check the resources.
 * @example withinAppScope('openid read write', { scope: 'read' }) // 'openid read'
 */
export function withinAppScope(scope: string | undefined, app: Pick<App, 'scope'>): string | undefined {
  if (scope === undefined || app.scope === undefined) return scope;
  const allowed = new Set([...app.scope.split(' '), 'openid']);
  const kept = scope.split(' ').filter((token) => allowed.has(token));
  return kept.length === 0 ? undefined : kept.join(' ');
}
