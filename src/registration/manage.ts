/**
 * `{registration_client_uri}` — client configuration (RFC 7592 §2) with the app's registration access token:
 * GET reads it, PUT replaces the metadata the client owns (applied to the app as stored at write time), DELETE
 * removes the app (its secrets, and with them its client credentials, refresh tokens and codes, stop working at
 * once; its access tokens fail the bearer guard).
 */
import type { App, AppPatch } from '../apps/app.js';
import { patchStoredApp } from '../apps/app-patch.js';
import { appPresence } from '../guard/app-presence.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { noStoreJSON, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import type { RouteParams } from '../http/router.js';
import { verifyClientSecret } from '../apps/client-secrets.js';
import { requireRegistrationAccess } from './access.js';
import { clientInformation } from './client-information.js';
import {
  assertSelfRegistrableGrants,
  assertSelfRegistrableRedirectURIs,
  checkLogoutTarget,
  type ClientMetadata,
  parseClientMetadata,
} from './client-metadata.js';
import { readJSONObject } from './json-body.js';
import { REGISTRATION_ACTOR } from './register.js';
import { takeChangeSlot } from './registration-bound.js';
import { refuseUnhonouredMetadata } from './unhonoured-metadata.js';

// RFC 7592 §2.2: values the server assigns; a client must not send them in an update.
const SERVER_ASSIGNED = ['registration_access_token', 'registration_client_uri', 'client_secret_expires_at', 'client_id_issued_at'];

/** Whether the body has `name` with a value other than JSON null. */
function sent(body: Record<string, unknown>, name: string): boolean {
  return Object.hasOwn(body, name) && body[name] !== null;
}

function gone(): OAuthError {
  // Deleted between the token check and the write: for the caller the token no longer manages anything.
  return new OAuthError('invalid_token', 'the registration access token is not valid for this client', {
    status: 401,
    headers: { 'www-authenticate': 'Bearer realm="sentinel", error="invalid_token"' },
  });
}

/** Handles GET, PUT and DELETE at a client's configuration endpoint. */
export async function handleClientConfiguration(
  context: SentinelContext,
  request: SentinelRequest,
  { accountId, clientId }: RouteParams,
): Promise<SentinelResponse> {
  const app = await requireRegistrationAccess(context, request, accountId, clientId);
  if (request.method === 'DELETE') {
    if (!(await context.apps.deleteApp?.(accountId, app.clientId, { actor: REGISTRATION_ACTOR }))) throw gone();
    appPresence(context).forget(accountId, app.clientId);
    // Committed: the app is gone whatever onEvent says; a 500 would tell the client otherwise.
    context.emit({ type: 'app.deleted', accountId, clientId: app.clientId, actor: REGISTRATION_ACTOR }, 'committed');
    return { status: 204, headers: { 'cache-control': 'no-store', pragma: 'no-cache' } };
  }
  if (request.method === 'PUT') return noStoreJSON(200, clientInformation(context, await update(context, request, app)));
  return noStoreJSON(200, clientInformation(context, app));
}

/** The names of the metadata an update changed (names only: the event says what changed, the registry says to what). */
function changedMetadata(before: App, after: App): string[] {
  const fields = [
    'redirectUris',
    'grantTypes',
    'name',
    'scope',
    'backchannelLogoutUri',
    'backchannelLogoutSessionRequired',
    'defaultMaxAge',
    'resources',
  ] as const;
  return fields.filter((name) => JSON.stringify(before[name]) !== JSON.stringify(after[name]));
}

/**
 * The RFC 8707 resources an update leaves the client. A client with a list (its own, or one an operator narrowed
 * since) may send a narrower one, never a wider one: leaving the field out would clear the list, and a cleared list
 * means every default resource of the service. So it must be sent, within the list it has.
 */
function resourcesOfUpdate(current: App, requested: string[] | undefined): string[] | undefined {
  const allowed = current.resources;
  if (allowed === undefined) return requested;
  if (requested === undefined || requested.some((resource) => !allowed.includes(resource))) {
    throw new OAuthError('invalid_client_metadata', `resources must be sent, and may name only ${allowed.join(' ')}`);
  }
  return requested;
}

/**
 * The scope an update leaves the client, read like its resources: a client with a scope (its own, or one an operator
 * narrowed since) may send a narrower one, never a wider one. Leaving the field out would clear the scope, and an
 * app without one may ask for any scope, so it must be sent, within the scope it has.
 */
function scopeOfUpdate(current: App, requested: string | undefined): string | undefined {
  if (current.scope === undefined) return requested;
  const allowed = new Set(current.scope.split(' '));
  if (requested === undefined || requested.split(' ').some((token) => !allowed.has(token))) {
    throw new OAuthError('invalid_client_metadata', `scope must be sent, and may name only ${current.scope}`);
  }
  return requested;
}

async function update(context: SentinelContext, request: SentinelRequest, app: App): Promise<App> {
  const body = await readJSONObject(request, context.config.bodyLimit);
  if (body.client_id !== app.clientId) throw new OAuthError('invalid_client_metadata', 'client_id must be the client id of this client');
  // A member sent as null is read as left out (RFC 7592 §2.2), these as every other.
  for (const name of SERVER_ASSIGNED) {
    if (sent(body, name)) throw new OAuthError('invalid_client_metadata', `${name} must not be sent in an update`);
  }
  const metadata = parseClientMetadata(body, app);
  await checkLogoutTarget(context, metadata);
  /** The patch of this update onto `current`, after the checks that depend on the app. */
  const patchOnto = (current: App): AppPatch => {
    checkAgainst(current, body, metadata);
    const patch = {
      redirectUris: metadata.redirectUris,
      grantTypes: metadata.grantTypes,
      name: metadata.name,
      scope: scopeOfUpdate(current, metadata.scope),
      // RFC 7592 §2.2: the update replaces the metadata, so a field left out is cleared.
      backchannelLogoutUri: metadata.backchannelLogoutUri,
      backchannelLogoutSessionRequired: metadata.backchannelLogoutSessionRequired,
      defaultMaxAge: metadata.defaultMaxAge,
      resources: resourcesOfUpdate(current, metadata.resources),
    };
    refuseUnhonouredMetadata(context, body, { ...current, ...patch }, current.resources);
    return patch;
  };
  // Checked first against the app as read, so an update refused for its content costs no change; only one about to
  // be written counts against the client's changes this hour.
  patchOnto(app);
  await takeChangeSlot(context, app.accountId, app.clientId);
  let before: App | undefined;
  // The body's pace is the client's: `app` may be stale by now. The store applies the patch to the app as it is at
  // write time, and runs the checks that depend on the app against that same app, so an operator's change made
  // meanwhile (a key removed from jwks, a demand, a rotated secret) is neither undone nor bypassed.
  const written = await patchStoredApp(
    context.apps,
    app.accountId,
    app.clientId,
    (current) => {
      // Disabled meanwhile: the service no longer knows it, as after a deletion.
      if (current.disabled === true) throw gone();
      const patch = patchOnto(current);
      before = current;
      return patch;
    },
    { actor: REGISTRATION_ACTOR },
  );
  if (written === null || before === undefined) throw gone();
  // Committed: the metadata is saved whatever onEvent says; a 500 would tell the client otherwise.
  context.emit(
    {
      type: 'app.updated',
      accountId: app.accountId,
      clientId: app.clientId,
      actor: REGISTRATION_ACTOR,
      changed: changedMetadata(before, written),
    },
    'committed',
  );
  return written;
}

/** The checks of an update that depend on the stored app, run against the app the update is applied to. */
function checkAgainst(current: App, body: Record<string, unknown>, metadata: ClientMetadata): void {
  // RFC 7592 §2.2: the current secret only. A rotated-out one still inside its overlap authenticates token requests,
  // but must not vouch for a change of the registration.
  if (
    sent(body, 'client_secret') &&
    (typeof body.client_secret !== 'string' || !verifyClientSecret(body.client_secret, current.clientSecretHash))
  ) {
    throw new OAuthError('invalid_client_metadata', 'client_secret does not match the current secret');
  }
  // Again against the app as stored now: an operator may have removed meanwhile a URI the client could not register.
  assertSelfRegistrableRedirectURIs(metadata.redirectUris, current.redirectUris);
  assertSelfRegistrableGrants(metadata.grantTypes, current.grantTypes);
  if (metadata.tokenEndpointAuthMethod !== current.tokenEndpointAuthMethod) {
    // A public client has no secret to keep and a confidential one needs one: register a new client instead.
    throw new OAuthError('invalid_client_metadata', 'token_endpoint_auth_method cannot change after registration');
  }
}
