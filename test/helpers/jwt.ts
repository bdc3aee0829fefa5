/**
 * Reading a JWT without verifying it, for assertions on what was issued. Suites that care about the signature
 * verify it separately, against the published JWKS.
 */

function part(token: string, index: 0 | 1): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[index] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** The claims of a JWT, unverified. */
export function claimsOf(token: string): Record<string, unknown> {
  return part(token, 1);
}

/** The protected header of a JWT, unverified. */
export function headerOf(token: string): Record<string, unknown> {
  return part(token, 0);
}

/** The `kid` a JWT names in its header. */
export function kidOf(token: string): string {
  return String(headerOf(token).kid);
}
