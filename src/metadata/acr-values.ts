/**
 * `acr_values_supported` (OpenID Connect Discovery §3) of an account's metadata: the levels a sign-in of this
 * configuration can reach, not every level the service knows. An app that reads the list and asks for its strongest
 * value must not find that no user of the service can ever reach it (every sign-in would come back
 * `unmet_authentication_requirements`).
 */
import type { ResolvedConfig } from '../config.js';
import { ACR_MFA, ACR_PASSWORD, ACR_VALUES, type AcrValue } from '../assurance/levels.js';

/**
 * The levels, weakest first: `phishing-resistant` needs passkeys (`users.passkeys`), `mfa` passkeys or a TOTP secret
 * (`users.totpSecret`), as the login page's step-up does (second-factor/step-up-method.ts). A host's own login page
 * (`login.url`) reports how it signed the user in through `completeLogin({ amr })`, so any level can be reached there.
 *
 * @example
 * reachableAcrValues(config) // ['urn:sentinel:acr:password'] without passkeys or TOTP
 */
export function reachableAcrValues(config: Pick<ResolvedConfig, 'users' | 'login'>): AcrValue[] {
  const { users, login } = config;
  if (login.url !== undefined || users?.passkeys !== undefined) return [...ACR_VALUES];
  if (typeof users?.totpSecret === 'function') return [ACR_PASSWORD, ACR_MFA];
  return [ACR_PASSWORD];
}
