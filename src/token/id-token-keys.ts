/**
 * Startup checks of the keys that sign ID tokens: an app's `idTokenSignedResponseAlg` needs a key of that
 * algorithm, and an OpenID Connect provider without an RSA key gets a warning, because RS256 is the one algorithm
 * every OpenID Connect client must support (OpenID Connect Core §15.1, Discovery §3).
 */
import type { ResolvedConfig } from '../config.js';
import { ConfigurationError } from '../errors.js';
import type { KeySet } from '../keys.js';

/**
 * Throws for an app whose ID token algorithm has no key; warns when ID tokens can be issued (an app with the
 * authorization_code grant, or apps from an AppStore, which may have it) and no RS256 key is configured.
 *
 * @example
 * checkIDTokenKeys(config, keys, (message) => console.warn(message));
 * @throws ConfigurationError naming `apps[i].idTokenSignedResponseAlg`.
 */
export function checkIDTokenKeys(config: ResolvedConfig, keys: KeySet, warn: (message: string) => void): void {
  config.apps.forEach((app, index) => {
    const alg = app.idTokenSignedResponseAlg;
    if (alg !== undefined && !keys.byAlg.has(alg)) {
      throw new ConfigurationError(`apps[${index}].idTokenSignedResponseAlg`, `no ${alg} key is configured in keys`);
    }
  });
  const issuesIDTokens = config.appStore !== undefined || config.apps.some((app) => app.grantTypes.includes('authorization_code'));
  if (issuesIDTokens && !keys.byAlg.has('RS256')) {
    warn(
      `sentinel-idp: no RS256 key configured; ID tokens are signed with ${keys.signer.alg}, which OpenID Connect ` +
        'clients need not support (RS256 is the one they must): add an RSA key to `keys` ' +
        '(`npx sentinel-idp keys generate --alg RS256`).',
    );
  }
}
