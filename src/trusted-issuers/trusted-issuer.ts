/**
 * Trusted brand issuers: the identity providers whose signed JWTs an account accepts as proof of who its consumer is
 * (RFC 7523 §3, RFC 8693 §2.1). One entry names the account, the issuer's `iss`, where its public keys are, and how
 * to read the consumer id. Entries come from the `trustedIssuers` option and, when the registry can hold them (the
 * PostgreSQL registry's `trusted_issuers` table), from the AppStore's `findTrustedIssuers`.
 */
import { z } from 'zod';
import { accountIdSchema } from '../lib/identifier-schema.js';
import { ConfigurationError } from '../errors.js';
import { assertValidKeyRegistration, plainHttpKeySetProblem } from '../client-assertion/registration.js';
import { openByDesign } from '../lib/strict-options.js';

/**
 * A brand identity provider an account trusts to name its consumers.
 *
 * @example
 * const brand: TrustedIssuer = { accountId: '123456', issuer: 'https://id.brand.example', jwksUri: 'https://id.brand.example/jwks.json' };
 */
export interface TrustedIssuer {
  /** The account whose token endpoint accepts this issuer's JWTs; no other account does. */
  accountId: string;
  /** The exact `iss` of the issuer's JWTs. */
  issuer: string;
  /**
   * Where the issuer publishes its public keys (https; plain http only with `clientJwks.allowPrivateAddresses`, for
   * development; fetched with the `clientJwks` limits). Give this or `jwks`.
   */
  jwksUri?: string | undefined;
  /** The issuer's public keys, inline. Give this or `jwksUri`. */
  jwks?: { keys: Record<string, unknown>[] } | undefined;
  /**
   * A value the JWT's `aud` must contain; without it, `aud` must name this account's issuer or the exchanging client.
   * A `jti` is single-use per account and issuer, so accounts trusting one issuer should each have their own value.
   */
  audience?: string | undefined;
  /** The claim that holds the consumer's participant id. Default `sub`. */
  consumerIdClaim?: string | undefined;
}

/** Control characters: C0, DEL and C1. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The claim a consumer id is read from when the entry names none. */
export const DEFAULT_CONSUMER_ID_CLAIM = 'sub';

/** The zod shape of one `trustedIssuers` entry (config/schema.ts plugs it into the options schema). */
export const trustedIssuerSchema = z.object({
  accountId: accountIdSchema,
  issuer: z.string().min(1).max(2048),
  jwksUri: z.string().optional(),
  // A JWK Set may carry members a reader does not know (as an app's `jwks`).
  jwks: openByDesign(z.object({ keys: z.array(z.record(z.string(), z.unknown())) }), 'RFC 7517 §5').optional(),
  audience: z.string().min(1).max(2048).optional(),
  consumerIdClaim: z.string().min(1).max(256).optional(),
});

/**
 * Checks one trusted issuer beyond its shape: exactly one of `jwks` / `jwksUri`, public keys only. Whether a plain
 * http `jwksUri` may be fetched is the service's setting, not the entry's: {@link trustedIssuerKeySetProblem}.
 * @throws ConfigurationError naming the field under `field`.
 * @example assertValidTrustedIssuer({ accountId: '123456', issuer: 'https://id.brand.example', jwks }, 'trustedIssuers[0]');
 */
export function assertValidTrustedIssuer(entry: TrustedIssuer, field: string): void {
  // What the CLI lists and the audit log names must be one line of text, and no real `iss`, `aud` or claim name holds
  // a control character (C0, DEL, C1).
  for (const name of ['issuer', 'audience', 'consumerIdClaim'] as const) {
    const value = entry[name];
    if (value !== undefined && CONTROL.test(value)) throw new ConfigurationError(`${field}.${name}`, 'must not contain control characters');
  }
  if ((entry.jwks === undefined) === (entry.jwksUri === undefined)) {
    throw new ConfigurationError(`${field}.jwks`, 'a trusted issuer needs exactly one of jwks or jwksUri');
  }
  assertValidKeyRegistration({ jwks: entry.jwks, jwksUri: entry.jwksUri }, field);
}

/**
 * Why the issuer's `jwksUri` is one no fetch would take, or `null`: plain http is fetched only with `allowPlainHttp`
 * (the service's `clientJwks.allowPrivateAddresses`, development and tests), as apps' `jwksUri` key sets are.
 * @example trustedIssuerKeySetProblem({ accountId: '123456', issuer: 'https://id.brand.example', jwksUri: 'http://id.brand.example/jwks' }, false) // 'must be an https URL …'
 */
export function trustedIssuerKeySetProblem(entry: TrustedIssuer, allowPlainHttp: boolean): string | null {
  return entry.jwksUri === undefined ? null : plainHttpKeySetProblem(entry.jwksUri, allowPlainHttp);
}

/**
 * Validates the `trustedIssuers` option: each entry, an https `jwksUri` (plain http only when `allowPlainHttp`, the
 * service's `clientJwks.allowPrivateAddresses`, without which no fetch would use it), and no issuer twice in one
 * account.
 * @throws ConfigurationError naming the first wrong entry.
 * @example const issuers = checkTrustedIssuers(parsed.trustedIssuers, parsed.clientJwks.allowPrivateAddresses);
 */
export function checkTrustedIssuers(entries: readonly TrustedIssuer[], allowPlainHttp = false): TrustedIssuer[] {
  const seen = new Set<string>();
  return entries.map((entry, index) => {
    const field = `trustedIssuers[${index}]`;
    assertValidTrustedIssuer(entry, field);
    const problem = trustedIssuerKeySetProblem(entry, allowPlainHttp);
    if (problem !== null) throw new ConfigurationError(`${field}.jwksUri`, `the key set of trusted issuer ${entry.issuer} ${problem}`);
    const key = `${entry.accountId}\u0000${entry.issuer}`;
    if (seen.has(key))
      throw new ConfigurationError(`${field}.issuer`, `issuer ${entry.issuer} is already trusted by account ${entry.accountId}`);
    seen.add(key);
    return entry;
  });
}
