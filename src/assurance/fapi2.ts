/**
 * The FAPI 2.0 Security Profile for one app (`profile: 'fapi2'`): what the profile demands of its requests, and the
 * configuration checks that refuse an app that could not meet it. The rules are enforced where each one applies:
 *
 * - pushed authorization requests only (par/resolve.ts), each naming its `redirect_uri` (par/push-endpoint.ts), with
 *   PKCE S256 (authorize/request/validate-request.ts; at the exchange too, token/authorization-code-grant.ts);
 * - `private_key_jwt` only, its assertion's `aud` the issuer as one string (client-assertion/verify-assertion.ts);
 * - DPoP-bound tokens only (dpop/token-binding.ts);
 * - codes live at most {@link FAPI2_CODE_TTL_SECONDS} (token/code-records.ts, token/authorization-code-grant.ts);
 * - refresh tokens are not rotated (token/refresh-token-grant.ts): the profile advises against rotation;
 * - ES256, PS256 or EdDSA for every signature it sees or receives ({@link FAPI2_ALGORITHMS}): checked at startup for
 *   the `apps` option (the service's signer and `dpop.algorithms`), at request time for a registry's app
 *   ({@link assertFapi2Servable}), and the ID tokens' default algorithm is an allowed one (token/id-token.ts
 *   `appIdTokenAlg`);
 * - `iss` on every authorization response (already so for every app, RFC 9207);
 * - the clock tolerance of the JWTs it sends to the service ({@link fapi2ClockTolerance}): client assertions and DPoP
 *   proofs at the token and PAR endpoints, at least 10 s, at most 60 s.
 *
 * The account's metadata does not change: it describes what the issuer offers every app, and the other apps of the
 * account keep what they registered.
 */
import type { KeyObject } from 'node:crypto';
import type { App } from '../apps/app.js';
import { ConfigurationError } from '../errors.js';

/** The one profile an app can name. */
export type AppProfile = 'fapi2';

/** The signature algorithms the profile allows (FAPI 2.0 Security Profile §5.4.1). */
export const FAPI2_ALGORITHMS: readonly string[] = Object.freeze(['ES256', 'PS256', 'EdDSA']);

/** The longest life of an authorization code of a fapi2 app (FAPI 2.0 Security Profile §5.3.2.1). */
export const FAPI2_CODE_TTL_SECONDS = 60;

/** A signing key as the profile judges it: its algorithm and, for EdDSA, its curve. */
export interface Fapi2SigningKey {
  readonly alg: string;
  readonly publicKey: KeyObject;
}

/**
 * The algorithm `key` signs with, as the profile names algorithms: the profile's EdDSA is Ed25519's (§5.4.1, "using
 * the Ed25519 variant"), so an Ed448 key, which the service also takes for EdDSA, is named apart and is not allowed.
 *
 * @example fapi2Algorithm(context.keys.signer) // 'ES256', or 'EdDSA (Ed448)'
 */
export function fapi2Algorithm(key: Fapi2SigningKey): string {
  return key.alg === 'EdDSA' && key.publicKey.asymmetricKeyType !== 'ed25519' ? 'EdDSA (Ed448)' : key.alg;
}

/**
 * The clock tolerance, in seconds, of the JWTs a fapi2 app sends (FAPI 2.0 Security Profile §5.3.2.1): one with an
 * `iat` or `nbf` up to 10 s ahead must be accepted, one more than 60 s ahead refused.
 */
const FAPI2_CLOCK_TOLERANCE = Object.freeze({ min: 10, max: 60 });

/**
 * Whether `app` follows the FAPI 2.0 Security Profile.
 *
 * @example
 * if (isFapi2(app)) requirePushedRequest();
 */
export function isFapi2(app: Pick<App, 'profile'>): boolean {
  return app.profile === 'fapi2';
}

/**
 * The DPoP proof algorithms `app` may use beyond the service's own list: the profile's for a fapi2 app, no narrowing
 * (`undefined`) for any other.
 *
 * @example checkDPoPProof(context, { proof, method, url, algorithms: proofAlgorithms(app) });
 */
export function proofAlgorithms(app: Pick<App, 'profile'>): readonly string[] | undefined {
  return isFapi2(app) ? FAPI2_ALGORITHMS : undefined;
}

/**
 * What a DPoP proof of `app` is checked with at this service's endpoints (token, PAR): for a fapi2 app, its
 * profile's algorithms and clock tolerance ({@link fapi2ClockTolerance} of `configured`, the service's); nothing
 * for any other, which keeps the service's.
 *
 * @example checkDPoPProof(context, { proof, method, url, ...proofInput(app, context.config.clockTolerance) });
 */
export function proofInput(app: Pick<App, 'profile'>, configured: number): { algorithms?: readonly string[]; clockTolerance?: number } {
  return isFapi2(app) ? { algorithms: FAPI2_ALGORITHMS, clockTolerance: fapi2ClockTolerance(app, configured) } : {};
}

/**
 * The clock tolerance to judge the JWTs of `app` with: the service's `clockTolerance` (`configured`), brought within
 * 10–60 s for a fapi2 app, whose profile requires an `iat` or `nbf` up to 10 s ahead to pass (the default tolerance is
 * 5 s) and one more than 60 s ahead to be refused (the option allows up to 300 s).
 *
 * @example const tolerance = fapi2ClockTolerance(app, context.config.clockTolerance);
 */
export function fapi2ClockTolerance(app: Pick<App, 'profile'>, configured: number): number {
  if (!isFapi2(app)) return configured;
  return Math.min(Math.max(configured, FAPI2_CLOCK_TOLERANCE.min), FAPI2_CLOCK_TOLERANCE.max);
}

/**
 * Refuses a fapi2 app whose registration could not meet the profile, as a `ConfigurationError` naming the field.
 *
 * @example
 * assertFapi2App(app, 'apps[0]');
 */
export function assertFapi2App(app: App, field: string): void {
  if (!isFapi2(app)) return;
  if (app.tokenEndpointAuthMethod !== 'private_key_jwt') {
    throw new ConfigurationError(`${field}.tokenEndpointAuthMethod`, "profile 'fapi2' needs private_key_jwt");
  }
  if (app.requireDPoP === false) throw new ConfigurationError(`${field}.requireDPoP`, "profile 'fapi2' needs DPoP-bound tokens");
  if (app.requirePushedAuthorizationRequests === false) {
    throw new ConfigurationError(`${field}.requirePushedAuthorizationRequests`, "profile 'fapi2' needs pushed authorization requests");
  }
  const alg = app.idTokenSignedResponseAlg;
  if (alg !== undefined && !FAPI2_ALGORITHMS.includes(alg)) {
    throw new ConfigurationError(`${field}.idTokenSignedResponseAlg`, `profile 'fapi2' allows ${FAPI2_ALGORITHMS.join(', ')} only`);
  }
  app.jwks?.keys.forEach((key, index) => {
    if (typeof key.alg === 'string' && !FAPI2_ALGORITHMS.includes(key.alg)) {
      throw new ConfigurationError(`${field}.jwks.keys[${index}].alg`, `profile 'fapi2' allows ${FAPI2_ALGORITHMS.join(', ')} only`);
    }
  });
}

/**
 * Refuses a service whose access tokens would be signed with an algorithm the profile does not allow, when any of
 * `apps` is a fapi2 app.
 *
 * @example
 * assertFapi2Signing(config.apps, 'ES256', 'keys');
 */
export function assertFapi2Signing(apps: readonly App[], signingAlg: string, field: string): void {
  if (apps.some(isFapi2) && !FAPI2_ALGORITHMS.includes(signingAlg)) {
    throw new ConfigurationError(
      field,
      `an app with profile 'fapi2' needs tokens signed with ${FAPI2_ALGORITHMS.join(', ')}, not ${signingAlg}`,
    );
  }
}

/**
 * Refuses a service that takes no DPoP proof algorithm the profile allows (`dpop.algorithms` without ES256, PS256 and
 * EdDSA) when any of `apps` is a fapi2 app: its token requests need a proof, and every proof it could sign would be
 * refused, each as the client's `invalid_dpop_proof`.
 *
 * @example
 * assertFapi2ProofAlgorithms(config.apps, config.dpop.algorithms, 'dpop.algorithms');
 */
export function assertFapi2ProofAlgorithms(apps: readonly App[], proofAlgs: readonly string[], field: string): void {
  if (apps.some(isFapi2) && !proofAlgs.some((alg) => FAPI2_ALGORITHMS.includes(alg))) {
    throw new ConfigurationError(field, `an app with profile 'fapi2' needs DPoP proofs signed with ${FAPI2_ALGORITHMS.join(', ')}`);
  }
}

/**
 * Refuses, at request time, to serve a fapi2 app tokens signed with an algorithm the profile does not allow (by the
 * access tokens' key (the service's signer) or the app's ID tokens', judged by {@link fapi2Algorithm}), or when the
 * service takes none of the profile's DPoP proof algorithms (`proofAlgs`, `dpop.algorithms`). {@link assertFapi2Signing} and
 * {@link assertFapi2ProofAlgorithms} check the `apps` option at startup; an app from a host's AppStore, or a key ring
 * rotated to another algorithm, is caught here, at every token and pushed request. The deployment's mistake, not the
 * client's: an Error (500 `server_error`, `onError`).
 *
 * @example
 * if (isFapi2(app)) assertFapi2Servable(app, context.keys.signer, idTokenKey(context, appIdTokenAlg(context, app)), context.config.dpop.algorithms);
 */
export function assertFapi2Servable(
  app: Pick<App, 'profile' | 'clientId'>,
  signer: Fapi2SigningKey,
  idTokenKey: Fapi2SigningKey,
  proofAlgs: readonly string[],
): void {
  if (!isFapi2(app)) return;
  const refused = [signer, idTokenKey].map(fapi2Algorithm).find((alg) => !FAPI2_ALGORITHMS.includes(alg));
  if (refused !== undefined) {
    throw new Error(
      `sentinel-idp: the fapi2 app ${app.clientId} needs tokens signed with ${FAPI2_ALGORITHMS.join(', ')}, and the service would sign with ${refused}`,
    );
  }
  if (!proofAlgs.some((alg) => FAPI2_ALGORITHMS.includes(alg))) {
    throw new Error(
      `sentinel-idp: the fapi2 app ${app.clientId} needs DPoP proofs signed with ${FAPI2_ALGORITHMS.join(', ')}, and dpop.algorithms takes none of them`,
    );
  }
}
