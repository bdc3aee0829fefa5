/**
 * Whether a deployment can issue ID tokens, decided from its options: both the startup check of the ID token keys
 * (token/id-token-keys.ts) and the key ring's default algorithms (keyring/options.ts) depend on it.
 */

/** The options that decide it (structural, so the config module can ask without an import cycle). */
export interface IDTokenIssuerOptions {
  appStore?: unknown;
  registration?: unknown;
  apps: readonly { grantTypes: readonly string[] }[];
}

/**
 * True when an app has the authorization_code grant, or apps come from an AppStore or from dynamic registration,
 * either of which may add one at run time.
 * @example if (issuesIDTokens(config)) algorithms.push('RS256');
 */
export function issuesIDTokens(options: IDTokenIssuerOptions): boolean {
  return (
    options.appStore !== undefined ||
    options.registration !== undefined ||
    options.apps.some((app) => app.grantTypes.includes('authorization_code'))
  );
}
