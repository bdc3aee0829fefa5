/**
 * `POST {basePath}/api/account/{accountId}/register` — dynamic client registration (RFC 7591 §3): an initial access
 * token, JSON client metadata in, a new app out with its secret and registration access token, each shown once.
 */
import { generateClientId, generateClientSecret, hashClientSecret } from '../apps/client-secrets.js';
import type { App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { noStoreJSON, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import { requireInitialAccessToken } from './access.js';
import { clientInformation } from './client-information.js';
import { checkLogoutTarget, parseClientMetadata } from './client-metadata.js';
import { backchannelFields } from '../apps/app-options.js';
import { clientIP } from '../http/client-ip.js';
import { readJSONObject } from './json-body.js';
import { takeRegistrationSlot } from './registration-bound.js';
import { refuseUnhonouredMetadata } from './unhonoured-metadata.js';

/** The actor the change log records for changes made over HTTP. */
export const REGISTRATION_ACTOR = 'registration-endpoint';

/** Handles a registration request. */
export async function handleRegister(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  // The token before the body: an unauthenticated caller gets nothing parsed.
  await requireInitialAccessToken(context, request, accountId);
  const body = await readJSONObject(request, context.config.bodyLimit);
  const metadata = parseClientMetadata(body);
  await checkLogoutTarget(context, metadata);
  const clientSecret = metadata.tokenEndpointAuthMethod === 'none' ? undefined : generateClientSecret();
  const registrationAccessToken = generateClientSecret();
  const app: App = {
    accountId,
    clientId: generateClientId(),
    clientSecretHash: clientSecret === undefined ? undefined : hashClientSecret(clientSecret),
    redirectUris: metadata.redirectUris,
    grantTypes: metadata.grantTypes,
    tokenEndpointAuthMethod: metadata.tokenEndpointAuthMethod,
    name: metadata.name,
    scope: metadata.scope,
    ...backchannelFields(metadata),
    ...(metadata.defaultMaxAge === undefined ? {} : { defaultMaxAge: metadata.defaultMaxAge }),
    ...(metadata.resources === undefined ? {} : { resources: metadata.resources }),
    registrationAccessTokenHash: hashClientSecret(registrationAccessToken),
    createdAt: Math.floor(Date.now() / 1000),
  };
  refuseUnhonouredMetadata(context, body, app);
  // Last, once nothing else refuses it: only a registration about to be saved counts against its address.
  await takeRegistrationSlot(context, clientIP(context.config, request), accountId);
  await context.apps.saveApp?.(app, { actor: REGISTRATION_ACTOR });
  // Saved: the client must get the credentials shown only in this answer, whatever onEvent says.
  context.emit({ type: 'app.registered', accountId, clientId: app.clientId, actor: REGISTRATION_ACTOR }, 'committed');
  return noStoreJSON(
    201,
    clientInformation(context, app, {
      ...(clientSecret === undefined ? {} : { client_secret: clientSecret }),
      registration_access_token: registrationAccessToken,
    }),
  );
}
