/**
 * Startup checks of the keys that sign ID tokens: an app's `idTokenSignedResponseAlg` needs a key of that
 * algorithm, and an OpenID Connect provider without an RSA key gets a warning, because RS256 is the one algorithm
 * every OpenID Connect client must support (OpenID Connect Core §15.1, Discovery §3).
 */
import { ConfigurationError } from '../errors.js';
import type { SigningAlgorithm } from '../keys/signing-keys.js';
import { type IDTokenIssuerOptions, issuesIDTokens } from './issues-id-tokens.js';

/**
 * What {@link checkIDTokenKeys} reads of the resolved configuration: structural, so that the checks
 * `sentinel-idp config check` shares with `createSentinel()` (src/config/startup-checks.ts) import no cycle through config.ts.
 */
export interface IDTokenKeyOptions extends IDTokenIssuerOptions {
  apps: readonly { grantTypes: readonly string[]; idTokenSignedResponseAlg?: SigningAlgorithm | undefined }[];
}

/**
 * Throws for an app whose ID token algorithm has no key; warns when ID tokens can be issued ({@link issuesIDTokens})
 * and no RS256 key is configured (a key ring has one by default then: keyring/options.ts).
 *
 * `algorithms` are those the service can sign with, the default signer's first: the configured keys' or, with
 * `keyRotation`, the ring's (known from the options, before the ring is loaded from the store).
 *
 * @example
 * checkIDTokenKeys(config, [...keys.byAlg.keys()], (message) => console.warn(message));
 * @throws ConfigurationError naming `apps[i].idTokenSignedResponseAlg`.
 */
export function checkIDTokenKeys(
  config: IDTokenKeyOptions,
  algorithms: readonly SigningAlgorithm[],
  warn: (message: string) => void,
): void {
  config.apps.forEach((app, index) => {
    const alg = app.idTokenSignedResponseAlg;
    if (alg !== undefined && !algorithms.includes(alg)) {
      throw new ConfigurationError(
        `apps[${index}].idTokenSignedResponseAlg`,
        `no ${alg} key is configured in keys or keyRotation.algorithms`,
      );
    }
  });
  if (issuesIDTokens(config) && !algorithms.includes('RS256')) {
    warn(
      `sentinel-idp: no RS256 key configured; ID tokens are signed with ${algorithms[0]}, which OpenID Connect ` +
        'clients need not support (RS256 is the one they must): add an RSA key to `keys` ' +
        '(`npx sentinel-idp keys generate --alg RS256`), or RS256 to `keyRotation.algorithms`.',
    );
  }
}
