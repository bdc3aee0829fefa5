/**
 * Registered client metadata this service understands but does not take from a registration request. RFC 7591 §2
 * has a server ignore metadata it does not understand, and this one still does; but ignoring a field it does
 * understand would register a client that believes something false about itself: that its tokens are DPoP-bound,
 * that its authorization requests must be pushed, that its ID tokens use the algorithm it asked for. Such a field
 * is refused with `invalid_client_metadata` (RFC 7591 §3.2.2), unless what it asks for is what the client gets
 * anyway, so a client echoing back its own client information is not refused.
 */
import { type App, postLogoutTargets } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { idTokenAlgorithm } from '../token/id-token.js';

function refused(name: string, reason: string): OAuthError {
  return new OAuthError('invalid_client_metadata', `${name} ${reason}`);
}

/**
 * Whether `a` holds the strings of `b`, each at least once, and nothing else. Not by length: `[x, x]` has the length
 * of `[x, y]`, and would pass for it while asking for one URI of the two.
 */
function sameSet(a: readonly unknown[], b: readonly string[]): boolean {
  return a.every((item) => typeof item === 'string' && b.includes(item)) && b.every((item) => a.includes(item));
}

const BY_OPERATOR = 'an operator can register such a client with the apps option, the CLI or an AppStore';

/**
 * Whether the request sends `name` with a value: JSON `null` is read as left out, as for every other field
 * (RFC 7592 §2.2), so a client library that writes every member it knows, `null` for those it has no value for, is
 * not refused for fields it never asked anything of.
 */
function sends(body: Record<string, unknown>, name: string): boolean {
  return Object.hasOwn(body, name) && body[name] !== null;
}

/** A boolean demand (RFC 9449 §5.2, RFC 9126 §6): allowed only when it matches what the app will do. */
function checkDemand(body: Record<string, unknown>, name: string, actual: boolean): void {
  if (!sends(body, name)) return;
  const value = body[name];
  if (typeof value !== 'boolean') throw refused(name, 'must be a boolean');
  if (value !== actual) throw refused(name, `${value} cannot be set through dynamic registration; ${BY_OPERATOR}`);
}

function effectiveIDTokenAlgorithm(context: SentinelContext, app: App): string | undefined {
  try {
    return idTokenAlgorithm(context, app);
  } catch {
    return undefined; // a stored algorithm without a key: nothing the client asks for can match it
  }
}

/**
 * Refuses a registered metadata field of the request that `app` (the client as it is about to be saved) would not
 * honour; nothing has been stored yet. `held`: the resources the client already has (an update's stored app), which
 * it may keep even when they are not default resources, since an operator gave them.
 *
 * @example
 * refuseUnhonouredMetadata(context, body, app); // then save the app
 */
export function refuseUnhonouredMetadata(
  context: SentinelContext,
  body: Record<string, unknown>,
  app: App,
  held: readonly string[] = [],
): void {
  checkDemand(body, 'dpop_bound_access_tokens', app.requireDPoP === true);
  checkDemand(body, 'require_pushed_authorization_requests', app.requirePushedAuthorizationRequests === true);
  // Keys and their algorithm serve private_key_jwt only, which dynamic registration does not offer.
  for (const name of ['jwks', 'jwks_uri', 'token_endpoint_auth_signing_alg']) {
    if (sends(body, name)) throw refused(name, `is used only by private_key_jwt clients; ${BY_OPERATOR}`);
  }
  if (sends(body, 'id_token_signed_response_alg')) {
    const value = body.id_token_signed_response_alg;
    const actual = effectiveIDTokenAlgorithm(context, app);
    if (typeof value !== 'string') throw refused('id_token_signed_response_alg', 'must be a string');
    if (value !== actual) {
      throw refused(
        'id_token_signed_response_alg',
        `must be ${actual ?? 'the service default'} here; for another algorithm, ${BY_OPERATOR}`,
      );
    }
  }
  // RFC 8707: a self-registered client may narrow the service's default resources, never name one of its own (which
  // would let whoever holds an initial access token mint tokens for any audience). One an operator gave it is kept:
  // an update must send the list again (manage.ts), so refusing it would leave the client no update but giving it up.
  const outside =
    app.resources?.filter((resource) => !context.config.defaultResources.includes(resource) && !held.includes(resource)) ?? [];
  if (outside.length > 0) throw refused('resources', `may name only the service's default resources; for another, ${BY_OPERATOR}`);
  // OpenID Connect Registration 1.0 §2. Every subject here is public (`subject_types_supported: ["public"]`): a
  // client registered for pairwise identifiers would correlate users across clients it believed it could not.
  if (sends(body, 'subject_type')) {
    const value = body.subject_type;
    if (typeof value !== 'string') throw refused('subject_type', 'must be a string');
    if (value !== 'public') throw refused('subject_type', 'must be "public": this service issues no pairwise subject identifiers');
  }
  if (sends(body, 'post_logout_redirect_uris')) {
    const value = body.post_logout_redirect_uris;
    // Without its own list, an app's logout may return to any of its redirect URIs (the logout endpoint's rule).
    const actual = postLogoutTargets(app);
    if (!Array.isArray(value) || !sameSet(value, actual)) {
      const which = app.postLogoutRedirectUris === undefined ? "the client's redirect_uris" : 'the list registered for the client';
      throw refused('post_logout_redirect_uris', `must equal ${which}; for another list, ${BY_OPERATOR}`);
    }
  }
}
