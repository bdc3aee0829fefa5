/**
 * `POST {registration_client_uri}/secret` — a new client secret, shown once. The previous one keeps working for
 * `registration.secretOverlapSeconds`, so every instance of the application can switch over before it ends; a client
 * may shorten that with a JSON body `{"previous_secret_expires_in": seconds}`, `0` ending the previous secret at once
 * (one that leaked), as an operator can with the CLI and the console.
 */
import { generateClientSecret, hashClientSecret } from '../apps/client-secrets.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { noStoreJSON, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import type { RouteParams } from '../http/router.js';
import { registrationOptions, requireRegistrationAccess } from './access.js';
import { REGISTRATION_ACTOR } from './register.js';
import { takeChangeSlot } from './registration-bound.js';
import { readOptionalJSONObject } from './json-body.js';

/**
 * How long the previous secret keeps working: the configured overlap, or less when the request asks. A request
 * without a body (or with no `previous_secret_expires_in`, or `null`) takes the overlap; one that asks for more is refused, so a
 * client can only shorten the time its previous secret stays good, never lengthen it.
 * @throws OAuthError invalid_request for a value that is no whole number of seconds from 0 to the overlap.
 */
async function requestedOverlap(context: SentinelContext, request: SentinelRequest, configured: number): Promise<number> {
  const asked = (await readOptionalJSONObject(request, context.config.bodyLimit))?.previous_secret_expires_in;
  // null as left out, as everywhere in registration (RFC 7592 §2.2).
  if (asked === undefined || asked === null) return configured;
  if (typeof asked !== 'number' || !Number.isInteger(asked) || asked < 0 || asked > configured) {
    throw new OAuthError('invalid_request', `previous_secret_expires_in must be a whole number of seconds from 0 to ${configured}`);
  }
  return asked;
}

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
  const overlap = await requestedOverlap(context, request, registrationOptions(context).secretOverlapSeconds);
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
