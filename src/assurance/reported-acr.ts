/**
 * Which `acr` the tokens of a sign-in report when the request named essential values (OpenID Connect Core §5.5.1.1:
 * the `acr` returned MUST be one of them, else the authentication failed).
 *
 * The levels are ordered (levels.ts), so a sign-in may be reported under a weaker class than it reached: a password
 * and a TOTP code answer an essential `password` as `password`. Of the requested values the sign-in reaches, the
 * strongest is reported, so the client learns as much as its list lets it. A sign-in that reaches none of them
 * meets the request no more than one below `acr_values` does. Without essential values the tokens report the
 * sign-in's own level, as before.
 */
import { type AcrValue, acrLevel, acrOf } from './levels.js';

/** What an authorization request asks of the level (requested-acr.ts). */
export interface AcrRequirement {
  /** The level the sign-in must reach. */
  acr?: AcrValue | undefined;
  /** The known values of an essential `acr` (weakest first): the tokens' `acr` must be one of them. */
  essentialAcr?: readonly AcrValue[] | undefined;
}

/**
 * The strongest of `essential` that a sign-in of `amr` reaches, or `undefined` when it reaches none.
 *
 * @example
 * reportedAcr(['urn:sentinel:acr:password'], ['pwd', 'otp', 'mfa']) // 'urn:sentinel:acr:password'
 */
export function reportedAcr(essential: readonly AcrValue[], amr: readonly string[] | undefined): AcrValue | undefined {
  const reached = acrLevel(acrOf(amr));
  let reported: AcrValue | undefined;
  for (const value of essential) {
    if (acrLevel(value) <= reached && (reported === undefined || acrLevel(value) > acrLevel(reported))) reported = value;
  }
  return reported;
}

/**
 * Whether a sign-in of `amr` meets `requirement`: it reaches the level, and, for essential values, it can be
 * reported as one of them.
 *
 * @example
 * if (!meetsAcrRequirement(interaction.request, input.amr)) return unmetRequirementsResponse(context, interaction, reason);
 */
export function meetsAcrRequirement(requirement: AcrRequirement, amr: readonly string[] | undefined): boolean {
  if (requirement.acr !== undefined && acrLevel(acrOf(amr)) < acrLevel(requirement.acr)) return false;
  return requirement.essentialAcr === undefined || reportedAcr(requirement.essentialAcr, amr) !== undefined;
}
