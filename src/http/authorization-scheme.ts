/**
 * Which `Authorization` schemes a protected resource here (the bearer guard, UserInfo) takes credentials in and
 * names in its challenges, and which one a client authenticates with at the token endpoints.
 */

/**
 * Whether an `Authorization` header value names a scheme a resource here accepts (`Bearer` or `DPoP`, any case),
 * whatever follows. RFC 6750 §3.1: a request with another scheme (`Basic …`) is one without credentials for the
 * resource, so its challenge carries no error code; a `Bearer` or `DPoP` header that does not parse is `invalid_token`.
 * @example usesTokenScheme('Basic YTpi') // false
 */
export function usesTokenScheme(authorization: string): boolean {
  return /^(?:Bearer|DPoP)(?: |$)/i.test(authorization);
}

/**
 * The scheme a protected resource's refusal names: `DPoP` for a request made with that scheme, whatever failed
 * (RFC 9449 §7.1: the client must learn the error in the scheme it used), else `Bearer`.
 * @example challengeScheme('DPoP eyJ…') // 'DPoP'
 */
export function challengeScheme(authorization: string | undefined): 'Bearer' | 'DPoP' {
  return authorization !== undefined && /^DPoP(?: |$)/i.test(authorization) ? 'DPoP' : 'Bearer';
}

/**
 * The description of a refused `Bearer` or `DPoP` header that does not parse (`DPoP a b`, a bare `DPoP`): it names the
 * form of the scheme the request used, so a DPoP client is not told to send a Bearer token.
 * @example malformedAuthorization('DPoP a b') // 'the Authorization header must be "DPoP <token>"'
 */
export function malformedAuthorization(authorization: string): string {
  return `the Authorization header must be "${challengeScheme(authorization)} <token>"`;
}

/**
 * A protected resource's challenge in `scheme`: Bearer's `realm` or DPoP's `algs` (RFC 9449 §7.1, the proof
 * algorithms the service takes), then `params`, each already written as `, name="value"`.
 * @example resourceChallenge('DPoP', ['ES256'], ', error="invalid_token"') // 'DPoP algs="ES256", error="invalid_token"'
 */
export function resourceChallenge(scheme: 'Bearer' | 'DPoP', algorithms: readonly string[], params: string): string {
  return scheme === 'DPoP' ? `DPoP algs="${algorithms.join(' ')}"${params}` : `Bearer realm="sentinel"${params}`;
}

/**
 * The challenge to a request without credentials for a resource that takes both schemes (RFC 9449 §7.1, RFC 9110
 * §11.6.1: several challenges in one header): Bearer first, for the clients that read only the first challenge (the
 * MCP SDK looks for `resource_metadata` in a `Bearer` one), then DPoP with its `algs`. `params` go in each.
 * @example credentialsChallenge(['ES256'], '') // 'Bearer realm="sentinel", DPoP algs="ES256"'
 */
export function credentialsChallenge(algorithms: readonly string[], params: string): string {
  return `${resourceChallenge('Bearer', algorithms, params)}, ${resourceChallenge('DPoP', algorithms, params)}`;
}

/**
 * The token of a `Bearer` credential, RFC 6750 §2.1's `b64token`: letters, digits and `-._~+/`, then any `=`s. The
 * pattern without anchors, for the parsers of an `Authorization` header and for the options that configure a
 * token a client must send in one (`registration.initialAccessToken`).
 */
export const B64TOKEN = '[A-Za-z0-9._~+/-]+=*';

const WHOLE_B64TOKEN = new RegExp(`^${B64TOKEN}$`);

/**
 * Whether `value` can be sent as a Bearer token at all. A configured token that cannot would make every request
 * that presents it a malformed header.
 * @example isB64Token('correct horse battery staple') // false
 */
export function isB64Token(value: string): boolean {
  return WHOLE_B64TOKEN.test(value);
}

/**
 * Whether an `Authorization` header value names the Basic scheme, with credentials after it or none: HTTP servers
 * trim the value, so `Basic ` arrives as `Basic`, and that is still a client authenticating through the header.
 * @example usesBasicScheme('Basic') // true
 */
export function usesBasicScheme(authorization: string): boolean {
  return /^basic(?:[ \t]|$)/i.test(authorization);
}

/** A token as the `Authorization` header presents it (RFC 6750 §2.1, RFC 9449 §7.1). */
export interface PresentedToken {
  scheme: 'Bearer' | 'DPoP';
  token: string;
}

const AUTHORIZATION = new RegExp(`^(Bearer|DPoP) +(${B64TOKEN}) *$`, 'i');

/**
 * The scheme and token of an `Authorization` header value, or `null` when it is not `Bearer <token>` or
 * `DPoP <token>` with a token of RFC 6750 §2.1 characters: the one reading of the bearer guard and UserInfo alike.
 * @example parseAuthorization('Bearer eyJ…') // { scheme: 'Bearer', token: 'eyJ…' }
 */
export function parseAuthorization(authorization: string): PresentedToken | null {
  const found = AUTHORIZATION.exec(authorization);
  if (found === null) return null;
  return { scheme: (found[1] as string).toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer', token: found[2] as string };
}
