/**
 * Startup checks of the keys that sign ID tokens: an app's `idTokenSignedResponseAlg` needs a key of that
 * algorithm, and an OpenID Connect provider without an RSA key gets a warning, because RS256 is the one algorithm
 * every OpenID Connect client must support (OpenID Connect Core §15.1, Discovery §3).
 */
import type { ResolvedConfig } from '../config.js';
import { ConfigurationError } from '../errors.js';
import type { SigningAlgorithm } from '../keys.js';

/** The algorithms the service can sign ID tokens with, and the one it signs with by default. */
export interface IDTokenKeys {
  algorithms: ReadonlySet<SigningAlgorithm>;
  signerAlg: SigningAlgorithm;
}

/**
 * Throws for an app whose ID token algorithm has no key; warns when ID tokens can be issued (an app with the
 * authorization_code grant, or apps from an AppStore, which may have it) and no RS256 key is configured.
 *
 * @example
 * checkIDTokenKeys(config, { algorithms: new Set(keys.byAlg.keys()), signerAlg: keys.signer.alg }, console.warn);
 * @throws ConfigurationError naming `apps[i].idTokenSignedResponseAlg`.
 */
export function checkIDTokenKeys(config: ResolvedConfig, keys: IDTokenKeys, warn: (message: string) => void): void {
  config.apps.forEach((app, index) => {
    const alg = app.idTokenSignedResponseAlg;
    if (alg !== undefined && !keys.algorithms.has(alg)) {
      throw new ConfigurationError(`apps[${index}].idTokenSignedResponseAlg`, `no ${alg} key is configured in keys`);
    }
  });
  const issuesIDTokens = config.appStore !== undefined || config.apps.some((app) => app.grantTypes.includes('authorization_code'));
  if (issuesIDTokens && !keys.algorithms.has('RS256')) {
    warn(
      `sentinel-idp: no RS256 key configured; ID tokens are signed with ${keys.signerAlg}, which OpenID Connect ` +
        'clients need not support (RS256 is the one they must): add an RSA key to `keys` ' +
        '(`npx sentinel-idp keys generate --alg RS256`).',
    );
  }
}
