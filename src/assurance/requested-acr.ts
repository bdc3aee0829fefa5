/**
 * What an authorization request asks of the sign-in's level (OpenID Connect Core §3.1.2.1 `acr_values`, §5.5.1.1 the
 * `claims` parameter's `acr`): the weakest of the service's levels it names, which a sign-in must reach.
 *
 * The levels are ordered (levels.ts), so a stronger sign-in satisfies a request for a weaker one: a passkey session
 * answers `acr_values=…:mfa`, and its tokens say `phishing-resistant`. Values the service does not issue are ignored,
 * as Core asks of voluntary ones; an essential `acr` naming only such values cannot be met.
 *
 * An essential `acr` with values is more than a level: §5.5.1.1 says the `acr` returned MUST be one of them. So its
 * known values are kept as well (`essential`), and the tokens report the strongest of them the sign-in reaches
 * (reported-acr.ts) instead of the sign-in's own level. When both targets name essential values, the one `acr` a
 * sign-in has must be in both lists: only the values they share are kept, and none shared cannot be met.
 */
import { ACR_VALUES, type AcrValue, acrLevel } from './levels.js';

/** What the request asks, or why it is refused (the caller turns the code into the redirect). */
export type AcrRequest =
  | { ok: true; acr: AcrValue | undefined; essential?: AcrValue[] | undefined }
  | { ok: false; code: 'invalid_request' | 'unmet_authentication_requirements'; description: string };

/** The members of a `claims` request (§5.5) that may carry `acr`. */
const CLAIM_TARGETS = ['id_token', 'userinfo'] as const;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The weakest known value of `values`, or `undefined` when none is known. */
function weakestKnown(values: readonly string[]): AcrValue | undefined {
  let weakest: AcrValue | undefined;
  for (const value of values) {
    const level = acrLevel(value);
    if (level > 0 && (weakest === undefined || level < acrLevel(weakest))) weakest = value as AcrValue;
  }
  return weakest;
}

/** The known values of `values`, in the service's order (weakest first). */
function knownValues(values: readonly string[]): AcrValue[] {
  return ACR_VALUES.filter((known) => values.includes(known));
}

function stronger(a: AcrValue | undefined, b: AcrValue | undefined): AcrValue | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return acrLevel(a) >= acrLevel(b) ? a : b;
}

type ClaimsAcr = { values: string[]; essential: boolean } | string | undefined;

/** The `acr` member of one `claims` target: its values and whether it is essential, or a problem. */
function claimsAcr(target: unknown, name: string): ClaimsAcr {
  if (target === undefined || target === null) return undefined;
  if (!isObject(target)) return `claims.${name} must be a JSON object`;
  const acr = target.acr;
  if (acr === undefined || acr === null) return undefined;
  if (!isObject(acr)) return `claims.${name}.acr must be null or a JSON object`;
  const { essential, value, values } = acr;
  if (essential !== undefined && typeof essential !== 'boolean') return `claims.${name}.acr.essential must be a boolean`;
  if (value !== undefined && typeof value !== 'string') return `claims.${name}.acr.value must be a string`;
  if (values !== undefined && !(Array.isArray(values) && values.every((item) => typeof item === 'string'))) {
    return `claims.${name}.acr.values must be an array of strings`;
  }
  const listed = value !== undefined ? [value] : ((values as string[] | undefined) ?? []);
  return { values: listed, essential: essential === true };
}

/**
 * Reads `acr_values` and the `claims` parameter of an authorization request, the latter already parsed into a JSON
 * object once for all its readers (authorize/request/oidc-params.ts).
 *
 * @example
 * readAcrRequest('urn:sentinel:acr:mfa', undefined) // { ok: true, acr: 'urn:sentinel:acr:mfa' }
 * readAcrRequest(undefined, { id_token: { acr: { essential: true, values: ['urn:sentinel:acr:password'] } } })
 * // { ok: true, acr: 'urn:sentinel:acr:password', essential: ['urn:sentinel:acr:password'] }
 */
export function readAcrRequest(acrValues: string | undefined, parsed: Readonly<Record<string, unknown>> | undefined): AcrRequest {
  let required = acrValues === undefined ? undefined : weakestKnown(acrValues.split(' ').filter((value) => value !== ''));
  if (parsed === undefined) return { ok: true, acr: required };
  let essential: AcrValue[] | undefined;
  for (const name of CLAIM_TARGETS) {
    const asked = claimsAcr(parsed[name], name);
    if (typeof asked === 'string') return { ok: false, code: 'invalid_request', description: asked };
    if (asked === undefined || asked.values.length === 0) continue;
    const known = weakestKnown(asked.values);
    if (known === undefined && asked.essential) {
      return {
        ok: false,
        code: 'unmet_authentication_requirements',
        description: `the essential acr is none of the values this service supports (${ACR_VALUES.join(' ')})`,
      };
    }
    required = stronger(required, known);
    if (!asked.essential) continue;
    const listed = knownValues(asked.values);
    essential = essential === undefined ? listed : essential.filter((value) => listed.includes(value));
    if (essential.length === 0) {
      return {
        ok: false,
        code: 'unmet_authentication_requirements',
        description: 'the essential acr of id_token and that of userinfo have no value in common',
      };
    }
  }
  if (essential === undefined) return { ok: true, acr: required };
  return { ok: true, acr: stronger(required, essential[0]), essential };
}
