/**
 * The checks `createSentinel()` makes once the options are resolved and the keys set up, as functions of their own
 * so that `sentinel-idp config check` (config/problems.ts) runs the very same ones instead of copies that drift apart.
 */
import type { AppStore } from '../apps/app.js';
import type { AppOptions } from '../apps/app-options.js';
import { MemoryAppStore } from '../apps/memory-app-store.js';
import { assertFapi2ProofAlgorithms, assertFapi2Signing, fapi2Algorithm, FAPI2_ALGORITHMS, isFapi2 } from '../assurance/fapi2.js';
import { ConfigurationError } from '../errors.js';
import type { KeySet, SigningAlgorithm } from '../keys/signing-keys.js';
import { assertRegistrationStore } from '../registration/options.js';
import { literalTargetProblem } from '../sessions/logout-target.js';
import { checkIDTokenKeys } from '../token/id-token-keys.js';
import { isIpHost } from './checks.js';
import type { ResolvedConfig } from './resolve.js';

/**
 * The algorithms the service signs with, the default signer's first, and the option they come from: a ring's are
 * known from `keyRotation.algorithms` before it is loaded, so `keys` is needed only without `keyRotation`.
 */
function signing(config: ResolvedConfig, keys: KeySet | undefined): { algorithms: readonly SigningAlgorithm[]; field: string } {
  if (config.keyRotation !== undefined) return { algorithms: config.keyRotation.algorithms, field: 'keyRotation.algorithms' };
  if (keys === undefined) throw new Error('sentinel-idp: the signing keys are needed without keyRotation');
  return { algorithms: [keys.signer.alg, ...keys.byAlg.keys()], field: 'keys' };
}

/**
 * Each app's ID token algorithm has a key, and a fapi2 app's tokens are signed with an algorithm the profile allows.
 * `keys` are the configured (or generated) keys, `undefined` with `keyRotation`.
 * @throws ConfigurationError naming `apps[i].idTokenSignedResponseAlg`, `keys` or `keyRotation.algorithms`.
 * @example checkIDTokenAlgorithms(config, keys, warn);
 */
export function checkIDTokenAlgorithms(config: ResolvedConfig, keys: KeySet | undefined, warn: (message: string) => void): void {
  checkIDTokenKeys(config, signing(config, keys).algorithms, warn);
}

/**
 * FAPI 2.0: the access tokens of a fapi2 app are signed with the service's signer, the first of its algorithms, and
 * neither it nor the key of the app's ID tokens may be an Ed448 key among the configured `keys` (the profile's EdDSA
 * is Ed25519's).
 * @throws ConfigurationError naming `keys` or `keyRotation.algorithms`.
 * @example checkFapi2Signing(config, keys);
 */
export function checkFapi2Signing(config: ResolvedConfig, keys: KeySet | undefined): void {
  const { algorithms, field } = signing(config, keys);
  // Never empty: the configured keys have a signer, and keyRotation.algorithms at least one (its schema).
  assertFapi2Signing(config.apps, algorithms[0] ?? '', field);
  // A ring generates Ed25519 keys for EdDSA; configured keys may hold an Ed448 one, which the profile's EdDSA is not.
  if (config.keyRotation !== undefined || keys === undefined) return;
  assertFapi2Signing(config.apps, fapi2Algorithm(keys.signer), field);
  config.apps.forEach((app, index) => {
    if (!isFapi2(app)) return;
    // Without idTokenSignedResponseAlg its ID tokens take the signer's algorithm (checked above), and with it that
    // algorithm's first key (token/id-token.ts); an algorithm without a key is checkIDTokenAlgorithms' to name.
    const chosen = app.idTokenSignedResponseAlg;
    const key = chosen === undefined ? undefined : keys.byAlg.get(chosen);
    const alg = key === undefined ? undefined : fapi2Algorithm(key);
    if (alg !== undefined && !FAPI2_ALGORITHMS.includes(alg)) {
      throw new ConfigurationError(field, `apps[${index}] has profile 'fapi2', and its ID tokens would be signed with ${alg}`);
    }
  });
}

/**
 * FAPI 2.0: a fapi2 app's proofs must use an algorithm the profile allows, so `dpop.algorithms` must take one.
 * @throws ConfigurationError naming `dpop.algorithms`.
 * @example checkFapi2ProofAlgorithms(config);
 */
export function checkFapi2ProofAlgorithms(config: ResolvedConfig): void {
  assertFapi2ProofAlgorithms(config.apps, config.dpop.algorithms, 'dpop.algorithms');
}

/**
 * The registry the service looks apps up in: the host's `appStore`, or the `apps` option in memory.
 * @example const registry = appRegistry(config);
 */
export function appRegistry(config: ResolvedConfig): AppStore {
  return config.appStore ?? new MemoryAppStore(config.apps);
}

/**
 * `apps` and `appStore` are exclusive: apps given beside a store would never be looked up.
 * @throws ConfigurationError naming `apps`.
 */
export function assertAppsOrAppStore(config: ResolvedConfig): void {
  if (config.appStore !== undefined && config.apps.length > 0) {
    throw new ConfigurationError('apps', 'give apps or appStore, not both (add the apps to your AppStore)');
  }
}

/**
 * With `registration`, the registry `apps` can save, update, delete apps and rotate their secrets.
 * @throws ConfigurationError naming `registration`.
 */
export function checkRegistrationStore(config: ResolvedConfig, apps: AppStore): void {
  if (config.registration !== undefined) assertRegistrationStore(apps);
}

/**
 * Each configured app's `backchannelLogoutUri` is one a logout token may be sent to, as far as can be told without
 * DNS (a private address written out, `localhost`); a delivery checks the resolved address again.
 * @throws ConfigurationError naming `apps[i].backchannelLogoutUri`.
 */
export function assertAppLogoutTargets(config: ResolvedConfig): void {
  for (const [index, app] of config.apps.entries()) {
    const problem =
      app.backchannelLogoutUri === undefined
        ? null
        : literalTargetProblem(app.backchannelLogoutUri, config.clientJwks.allowPrivateAddresses);
    if (problem !== null) throw new ConfigurationError(`apps[${index}].backchannelLogoutUri`, problem);
  }
}

/** Characters below which a chosen client secret is warned about (generated ones are 43: 256 random bits). */
export const MIN_CHOSEN_SECRET_LENGTH = 32;

/**
 * Warns of each `apps` entry whose plain `clientSecret` is shorter than {@link MIN_CHOSEN_SECRET_LENGTH}: it is stored
 * as a fast SHA-256 digest and the token endpoint keeps no per-client count of failures (one would let anyone who
 * knows a client id lock the client out), so only its length protects it (RFC 6749 §2.3.1). A warning, not a
 * refusal: existing configurations hold such secrets. Names the app and the length, never the secret.
 * @example warnShortClientSecrets(options.apps, warn);
 */
export function warnShortClientSecrets(apps: readonly AppOptions[] | undefined, warn: (message: string) => void): void {
  for (const [index, app] of (apps ?? []).entries()) {
    const length = app.clientSecret?.length;
    if (length === undefined || length >= MIN_CHOSEN_SECRET_LENGTH) continue;
    warn(
      `sentinel-idp: apps[${index}] (client id ${JSON.stringify(app.clientId)}) has a clientSecret of ${length} characters, ` +
        `fewer than ${MIN_CHOSEN_SECRET_LENGTH}: only its length protects it against guessing at the token endpoint and ` +
        'from a leaked digest. Give a generated one (generateClientSecret(), `npx sentinel-idp apps register`).',
    );
  }
}

/**
 * Warns when passkeys are on (`users.passkeys`) and their RP id is the issuer's host, an IP address (an issuer such as
 * `http://127.0.0.1:3000`): browsers run WebAuthn only on a host name (WebAuthn §5.1.3 step 7), so every passkey
 * sign-in and registration would fail in the browser with nothing but a silent button. A warning, not a refusal:
 * password sign-in works there, and a demo started on an address must start. (`passkeys.rpId` given as an IP address
 * is refused, config/checks.ts.)
 * @example warnIpRelyingParty(config, warn);
 */
export function warnIpRelyingParty(config: ResolvedConfig, warn: (message: string) => void): void {
  if (config.users?.passkeys === undefined || config.passkeys.rpId !== undefined) return;
  const host = new URL(config.issuer).hostname;
  if (!isIpHost(host)) return;
  warn(
    `sentinel-idp: the issuer's host ${host} is an IP address, and browsers run passkeys only on a host name: every ` +
      'passkey sign-in and registration will fail in the browser. Use an issuer on a host name (localhost in development).',
  );
}
