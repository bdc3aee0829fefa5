/**
 * The fields of an {@link App}, for the registries that take one from the host (`saveApp`, `updateApp`): a field
 * outside the list is a mistake (a misspelled `requireDpop`) that the registry would otherwise keep or drop without
 * a word, leaving the app without the demand the host meant.
 */
import type { App } from './app.js';
import { assertKnownKeys, type KeysOf } from '../lib/strict-options.js';

// `satisfies` keeps the list in step with App: a field added there fails to compile until it is added here.
const APP_FIELDS = {
  accountId: true,
  clientId: true,
  clientSecretHash: true,
  redirectUris: true,
  grantTypes: true,
  tokenEndpointAuthMethod: true,
  name: true,
  scope: true,
  idTokenSignedResponseAlg: true,
  postLogoutRedirectUris: true,
  backchannelLogoutUri: true,
  backchannelLogoutSessionRequired: true,
  defaultMaxAge: true,
  retiringSecrets: true,
  registrationAccessTokenHash: true,
  createdAt: true,
  disabled: true,
  jwks: true,
  jwksUri: true,
  requireDPoP: true,
  requirePushedAuthorizationRequests: true,
  profile: true,
  resources: true,
} satisfies KeysOf<App>;

/**
 * Refuses an app with a field {@link App} does not have, as a `ConfigurationError` naming `app.<field>` and the
 * field meant.
 *
 * @example
 * assertAppFields(app); // before writing it to the registry
 */
export function assertAppFields(app: App): void {
  assertKnownKeys(app, APP_FIELDS, 'app');
}
