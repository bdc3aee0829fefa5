/**
 * Which `Authorization` schemes a protected resource here (the bearer guard, UserInfo) takes credentials in.
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
