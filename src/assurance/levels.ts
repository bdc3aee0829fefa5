/**
 * Levels of assurance of a sign-in: the authentication methods references (`amr`, RFC 8176) a sign-in collected and
 * the authentication context class (`acr`, OpenID Connect Core §2) they add up to. The three `acr` values are
 * ordered: a passkey reaches every level, a password and a TOTP code reach `mfa`, a password alone `password`.
 *
 * `amr` is stored (in the session, the code, the grant) and `acr` derived from it here, so the two can never
 * disagree. The one exception is a request's essential `acr` values (OpenID Connect Core §5.5.1.1): the code and the
 * grant then also store the value reported (reported-acr.ts), never above the level their `amr` reaches.
 */

/** A password sign-in (`amr: ["pwd"]`). */
export const ACR_PASSWORD = 'urn:sentinel:acr:password';
/** A password and a second factor (`amr: ["pwd", "otp", "mfa"]`). */
export const ACR_MFA = 'urn:sentinel:acr:mfa';
/** A passkey with user verification (`amr: ["hwk" | "swk", "user", "mfa"]`): bound to the origin, so not phishable. */
export const ACR_PHISHING_RESISTANT = 'urn:sentinel:acr:phishing-resistant';

/**
 * The `acr` values the service issues, weakest first (`acr_values_supported` of the discovery document).
 *
 * @example
 * ACR_VALUES.includes(claims.acr) // true for every access token of a user
 */
export const ACR_VALUES = [ACR_PASSWORD, ACR_MFA, ACR_PHISHING_RESISTANT] as const;

/** One of {@link ACR_VALUES}. */
export type AcrValue = (typeof ACR_VALUES)[number];

/** The RFC 8176 values the service records. */
export type AmrValue = 'pwd' | 'otp' | 'hwk' | 'swk' | 'user' | 'mfa';

const AMR_VALUES: ReadonlySet<string> = new Set<AmrValue>(['pwd', 'otp', 'hwk', 'swk', 'user', 'mfa']);

/** The `amr` of a password sign-in. */
export const PASSWORD_AMR: readonly AmrValue[] = Object.freeze(['pwd']);
/** The `amr` of a password followed by a TOTP code (or a recovery code, which stands in for the device). */
export const SECOND_FACTOR_AMR: readonly AmrValue[] = Object.freeze(['pwd', 'otp', 'mfa']);

/**
 * The `amr` of a passkey sign-in with user verification: `hwk` for a credential bound to one device, `swk` for one
 * that syncs between devices (its private key leaves the authenticator, RFC 8176 §2). Bound or synced is the
 * authenticator's own report (the BE flag): passkeys are registered without attestation, so `hwk` is not proof the
 * key is in hardware (docs/guides/security-defaults.md lists it among the departures from the RFCs).
 *
 * @example
 * passkeyAmr('singleDevice') // ['hwk', 'user', 'mfa']
 */
export function passkeyAmr(deviceType: 'singleDevice' | 'multiDevice'): AmrValue[] {
  return [deviceType === 'singleDevice' ? 'hwk' : 'swk', 'user', 'mfa'];
}

/**
 * The level of an `acr` value: 1, 2 or 3 for the service's own, 0 for anything else (never satisfies a requirement).
 *
 * @example
 * acrLevel(ACR_MFA) // 2
 */
export function acrLevel(acr: unknown): number {
  const index = ACR_VALUES.indexOf(acr as AcrValue);
  return index + 1;
}

/**
 * The `acr` an `amr` adds up to, or `undefined` for none (an unknown method, or a session of an earlier version that
 * did not record one: it then meets no requirement and a step-up signs in again).
 *
 * @example
 * acrOf(['pwd', 'otp', 'mfa']) // 'urn:sentinel:acr:mfa'
 */
export function acrOf(amr: readonly string[] | undefined): AcrValue | undefined {
  if (amr === undefined) return undefined;
  if ((amr.includes('hwk') || amr.includes('swk')) && amr.includes('user')) return ACR_PHISHING_RESISTANT;
  if (amr.includes('pwd') && amr.includes('otp')) return ACR_MFA;
  if (amr.includes('pwd')) return ACR_PASSWORD;
  return undefined;
}

/**
 * `value` as a stored `amr`: an array of known RFC 8176 values, else `undefined` (a stored record is never trusted
 * to name a method the service does not know).
 *
 * @example
 * readAmr(['pwd']) // ['pwd']
 */
export function readAmr(value: unknown): AmrValue[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > AMR_VALUES.size) return undefined;
  return value.every((item) => typeof item === 'string' && AMR_VALUES.has(item)) ? (value as AmrValue[]) : undefined;
}

/**
 * The `acr` and `amr` claims of a token for a sign-in's `amr`: both, or neither when the sign-in has none.
 * `reported` is the `acr` stored for a request's essential values (reported-acr.ts): it replaces the derived one
 * when it is a known value the methods reach. A stored value that is not (a corrupt or altered record) is not
 * trusted, and the token then carries neither claim, as for an `amr` the service does not know.
 *
 * @example
 * Object.assign(claims, assuranceClaims(['pwd'])) // { acr: 'urn:sentinel:acr:password', amr: ['pwd'] }
 * assuranceClaims(['pwd', 'otp', 'mfa'], ACR_PASSWORD) // { acr: 'urn:sentinel:acr:password', amr: ['pwd', 'otp', 'mfa'] }
 */
export function assuranceClaims(amr: readonly string[] | undefined, reported?: string): { acr: AcrValue; amr: string[] } | undefined {
  const reached = acrOf(amr);
  if (reached === undefined || amr === undefined) return undefined;
  if (reported === undefined) return { acr: reached, amr: [...amr] };
  const level = acrLevel(reported);
  return level > 0 && level <= acrLevel(reached) ? { acr: reported as AcrValue, amr: [...amr] } : undefined;
}
