/**
 * Reading a JWT's claims for display. The demo shows what it received; it does not trust a claim for a decision.
 * The ID token came straight from the token endpoint over the back channel (OpenID Connect Core §3.1.3.7 lets a
 * client rely on TLS there instead of checking the signature), and the APIs verify access tokens themselves.
 */

/** The payload of a compact JWS, or `null` when it is not one. */
export function decodeClaims(jwt: unknown): Record<string, unknown> | null {
  if (typeof jwt !== 'string') return null;
  try {
    const payload: unknown = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? (payload as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Claims that are instants (RFC 7519 §4.1, OIDC Core §2): shown with their UTC time too. */
export const TIME_CLAIMS: ReadonlySet<string> = new Set(['exp', 'iat', 'nbf', 'auth_time']);

/** `1764380000` → `2025-11-29 01:33:20 UTC`. */
export function utc(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
