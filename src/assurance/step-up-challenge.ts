/**
 * What a protected resource asks of the sign-in behind an access token (RFC 9470 step-up authentication): a level
 * (`acrValues`) and a freshness (`maxAge`). A token below either is refused with `insufficient_user_authentication`
 * and a challenge that tells the client what to ask for at the authorization endpoint (RFC 9470 §3):
 *
 * `WWW-Authenticate: Bearer error="insufficient_user_authentication", error_description="…", acr_values="…", max_age="…"`
 *
 * in the scheme the token came with: `DPoP algs="…", error="insufficient_user_authentication", …` for a DPoP one.
 *
 * The levels are ordered (levels.ts): a token whose `acr` is at least the weakest value asked for passes. A token
 * with no user sign-in behind it (an app's own token: no `acr`, no `auth_time`) meets no requirement.
 */
import { ConfigurationError, OAuthError, wireDescription } from '../errors.js';
import { ACR_VALUES, type AcrValue, acrLevel } from './levels.js';

/** A resource's requirement, checked once when it is set up. */
export interface StepUpRequirement {
  /** The acceptable `acr` values, in the caller's order (for the challenge), and the weakest one's level. */
  acrValues?: readonly AcrValue[] | undefined;
  minLevel: number;
  /** Seconds since the sign-in beyond which the token is too old. */
  maxAge?: number | undefined;
}

/** The options as a host writes them: `acrValues` a space-separated string or a list. */
export interface StepUpOptions {
  acrValues?: string | readonly string[] | undefined;
  maxAge?: number | undefined;
}

/**
 * The requirement of `options`, or `undefined` when they ask for nothing; a value the service never issues (or a
 * `maxAge` that is not a non-negative integer) is a `ConfigurationError` naming `field`, since no token could meet it.
 *
 * @example
 * stepUpRequirement({ acrValues: 'urn:sentinel:acr:mfa', maxAge: 300 }, 'requireAccessToken') // { acrValues: [...], minLevel: 2, maxAge: 300 }
 */
export function stepUpRequirement(options: StepUpOptions, field: string): StepUpRequirement | undefined {
  const { acrValues, maxAge } = options;
  if (acrValues === undefined && maxAge === undefined) return undefined;
  if (maxAge !== undefined && !(Number.isSafeInteger(maxAge) && maxAge >= 0)) {
    throw new ConfigurationError(`${field}.maxAge`, 'must be a non-negative integer number of seconds');
  }
  if (acrValues === undefined) return { minLevel: 0, maxAge };
  const listed = typeof acrValues === 'string' ? acrValues.split(' ').filter((value) => value !== '') : [...acrValues];
  if (listed.length === 0 || listed.some((value) => acrLevel(value) === 0)) {
    throw new ConfigurationError(`${field}.acrValues`, `must name values this service issues: ${ACR_VALUES.join(' ')}`);
  }
  const minLevel = Math.min(...listed.map((value) => acrLevel(value)));
  return { acrValues: listed as AcrValue[], minLevel, maxAge };
}

/**
 * The RFC 9470 §3 refusal for `requirement`, with its challenge in the presentation's scheme; a DPoP one names the
 * proof algorithms first, as every DPoP challenge does (RFC 9449 §7.1).
 */
function insufficient(
  requirement: StepUpRequirement,
  description: string,
  scheme: 'Bearer' | 'DPoP',
  algorithms: readonly string[],
): OAuthError {
  const start = scheme === 'DPoP' ? `DPoP algs="${algorithms.join(' ')}",` : 'Bearer';
  let challenge = `${start} error="insufficient_user_authentication", error_description="${wireDescription(description)}"`;
  if (requirement.acrValues !== undefined) challenge += `, acr_values="${requirement.acrValues.join(' ')}"`;
  if (requirement.maxAge !== undefined) challenge += `, max_age="${requirement.maxAge}"`;
  return new OAuthError('insufficient_user_authentication', description, { status: 401, headers: { 'www-authenticate': challenge } });
}

/**
 * Throws the `insufficient_user_authentication` refusal when a verified token's `acr` or `auth_time` does not meet
 * `requirement`. `algorithms` are the DPoP proof algorithms, named in a DPoP challenge.
 *
 * @example
 * checkStepUp(claims, requirement, Math.floor(Date.now() / 1000), 'Bearer', config.dpop.algorithms);
 */
export function checkStepUp(
  claims: { acr?: unknown; auth_time?: unknown },
  requirement: StepUpRequirement,
  nowSeconds: number,
  scheme: 'Bearer' | 'DPoP',
  algorithms: readonly string[],
): void {
  if (requirement.acrValues !== undefined && acrLevel(claims.acr) < requirement.minLevel) {
    throw insufficient(requirement, 'a stronger authentication level is required', scheme, algorithms);
  }
  if (requirement.maxAge !== undefined) {
    const authTime = claims.auth_time;
    if (typeof authTime !== 'number' || nowSeconds - authTime > requirement.maxAge) {
      throw insufficient(requirement, 'a more recent authentication is required', scheme, algorithms);
    }
  }
}
