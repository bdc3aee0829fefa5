/**
 * `sentinel.registerApp()`: registering an application at runtime, with a generated client id and secret, through
 * the same validation and defaults as an `apps` entry.
 */
import { generateClientId, generateClientSecret, hashClientSecret } from './client-secrets.js';
import type { App, AppStore, GrantType, TokenEndpointAuthMethod } from './app.js';
import { appFromInput } from './app-schema.js';
import { ConfigurationError } from '../errors.js';
import { assertKnownKeys, type KeysOf } from '../lib/strict-options.js';
import type { EventInput } from '../events/sentinel-event.js';
import type { EventStanding } from '../events/emitter.js';

/**
 * Input of `sentinel.registerApp()`: the client metadata of RFC 7591 §2 the service keeps (redirect URIs, grant
 * types, token endpoint auth method, name, scope); the client id and secret are generated. Validated and defaulted
 * exactly as an `apps` entry: `grantTypes` defaults to all three (`authorization_code` and `refresh_token` for a
 * public client).
 *
 * @example
 * const input: RegisterAppInput = { accountId: '123456', redirectUris: ['https://app.example.com/cb'], grantTypes: ['authorization_code'] };
 */
export interface RegisterAppInput {
  accountId: string;
  redirectUris?: readonly string[];
  grantTypes?: readonly GrantType[];
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  name?: string;
  scope?: string;
  /** Where the app takes back-channel logout tokens (see `AppOptions.backchannelLogoutUri`). */
  backchannelLogoutUri?: string;
  /** Whether the app needs `sid` in its logout tokens; default `true`. */
  backchannelLogoutSessionRequired?: boolean;
  /** Seconds after which a sign-in is too old for this app when its request names no `max_age` (`AppOptions.defaultMaxAge`). */
  defaultMaxAge?: number;
}

/**
 * Result of `sentinel.registerApp()` (the RFC 7591 §3.2.1 information response): the secret is shown once and
 * stored only as its hash.
 *
 * @example
 * const { clientId, clientSecret } = await sentinel.registerApp({ accountId: '123456' });
 * deliverToApplication(clientId, clientSecret); // it cannot be shown again
 */
export interface RegisterAppResult {
  clientId: string;
  /** Absent for public clients. */
  clientSecret?: string | undefined;
  clientSecretHash?: string | undefined;
  app: App;
}

const REGISTER_APP_INPUT_KEYS = {
  accountId: true,
  redirectUris: true,
  grantTypes: true,
  tokenEndpointAuthMethod: true,
  name: true,
  scope: true,
  backchannelLogoutUri: true,
  backchannelLogoutSessionRequired: true,
  defaultMaxAge: true,
} satisfies KeysOf<RegisterAppInput>;

/** The actor the change log and the `app.registered` event record for `registerApp()`. */
export const API_ACTOR = 'api';

/**
 * Registers an application in `apps`; the returned secret exists nowhere else. `emit` (the service's) receives the
 * `app.registered` event once the app is saved, as a committed event (a failing `onEvent` does not fail it). `actor`
 * is who the registry's change log and the event name: `api` for `sentinel.registerApp()`, the operator
 * (`console:<user id>`) for the console's registration form.
 */
export async function registerApp(
  apps: AppStore,
  input: RegisterAppInput,
  emit?: (event: EventInput, standing?: EventStanding) => void,
  actor: string = API_ACTOR,
): Promise<RegisterAppResult> {
  // Each field is copied by name below: an unknown one (a misspelled redirectUri) would be dropped, so it is refused.
  assertKnownKeys(input, REGISTER_APP_INPUT_KEYS, 'app');
  if (apps.saveApp === undefined) {
    throw new ConfigurationError('appStore', 'registerApp() needs an AppStore with saveApp()');
  }
  const isPublic = input.tokenEndpointAuthMethod === 'none';
  const clientSecret = isPublic ? undefined : generateClientSecret();
  const clientSecretHash = clientSecret === undefined ? undefined : hashClientSecret(clientSecret);
  // The same validation and defaults as an `apps` entry (README, options table): grant types default to all three.
  const app = appFromInput(
    {
      accountId: input.accountId,
      clientId: generateClientId(),
      clientSecretHash,
      redirectUris: input.redirectUris,
      grantTypes: input.grantTypes,
      tokenEndpointAuthMethod: input.tokenEndpointAuthMethod,
      name: input.name,
      scope: input.scope,
      backchannelLogoutUri: input.backchannelLogoutUri,
      backchannelLogoutSessionRequired: input.backchannelLogoutSessionRequired,
      defaultMaxAge: input.defaultMaxAge,
    },
    'app',
  );
  await apps.saveApp(app, { actor });
  // Saved: the caller must get the secret, which exists nowhere else, whatever onEvent says.
  emit?.({ type: 'app.registered', accountId: app.accountId, clientId: app.clientId, actor }, 'committed');
  return { clientId: app.clientId, clientSecret, clientSecretHash, app };
}
