/**
 * `POST {registration_client_uri}/secret` — a new client secret, shown once. The previous one keeps working for
 * `registration.secretOverlapSeconds`, so every instance of the application can switch over before it ends.
 */
import { generateClientSecret, hashClientSecret } from '../apps/client-secrets.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { noStoreJSON, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import type { RouteParams } from '../http/router.js';
import { registrationOptions, requireRegistrationAccess } from './access.js';
import { REGISTRATION_ACTOR } from './register.js';
import { takeChangeSlot } from './registration-bound.js';

/** Handles a secret rotation. */
export async function handleRotateSecret(
  context: SentinelContext,
  request: SentinelRequest,
  { accountId, clientId }: RouteParams,
): Promise<SentinelResponse> {
  const app = await requireRegistrationAccess(context, request, accountId, clientId);
  if (app.tokenEndpointAuthMethod === 'none') throw new OAuthError('invalid_client_metadata', 'a public client has no secret to rotate');
  if (app.tokenEndpointAuthMethod === 'private_key_jwt') {
    throw new OAuthError('invalid_client_metadata', 'a private_key_jwt client authenticates with its keys and has no secret to rotate');
  }
  const overlap = registrationOptions(context).secretOverlapSeconds;
  await takeChangeSlot(context, accountId, app.clientId);
  const clientSecret = generateClientSecret();
  const rotated = await context.apps.rotateClientSecret?.(accountId, app.clientId, hashClientSecret(clientSecret), overlap, {
    actor: REGISTRATION_ACTOR,
  });
  if (rotated === null || rotated === undefined) {
    throw new OAuthError('invalid_token', 'the registration access token is not valid for this client', {
      status: 401,
      headers: { 'www-authenticate': 'Bearer realm="sentinel", error="invalid_token"' },
    });
  }
  // Committed: the new secret is stored and exists only in this answer, so a failing onEvent must not withhold it.
  context.emit(
    { type: 'app.secret_rotated', accountId, clientId: app.clientId, actor: REGISTRATION_ACTOR, overlapSeconds: overlap },
    'committed',
  );
  const now = Math.floor(Date.now() / 1000);
  return noStoreJSON(200, {
    client_id: app.clientId,
    client_secret: clientSecret,
    client_secret_expires_at: 0,
    ...(overlap > 0 && app.clientSecretHash !== undefined ? { previous_secret_expires_at: now + overlap } : {}),
  });
}
