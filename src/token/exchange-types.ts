/**
 * The identifiers of RFC 8693 token exchange and RFC 7523 JWT bearer, on their own so the grants, the delegation
 * and the metadata share one spelling.
 */

/** RFC 8693 §2.1 grant type. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** RFC 7523 §2.1 grant type. */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** RFC 8693 §3 token type identifiers this service accepts or issues. */
export const TOKEN_TYPES = {
  accessToken: 'urn:ietf:params:oauth:token-type:access_token',
  idToken: 'urn:ietf:params:oauth:token-type:id_token',
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
} as const;
