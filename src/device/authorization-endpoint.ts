/**
 * `POST {basePath}/api/account/{accountId}/device_authorization` — the device authorization endpoint (RFC 8628 §3.1,
 * §3.2): the client authenticates as at the token endpoint (a public client by its id alone), and gets a device code
 * to poll with, a user code for the person, and where to enter it.
 */
import { DEVICE_CODE_GRANT, requireGrant, type App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError, quotedValues } from '../errors.js';
import { clientIP } from '../http/client-ip.js';
import { readForm } from '../http/form-body.js';
import { noStoreJSON, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import { single } from '../http/params.js';
import { routeUrl } from '../http/route-paths.js';
import { randomSecret } from '../lib/random-secrets.js';
import { authenticateClient } from '../token/client-auth.js';
import { checkTokenQuery } from '../token/token-endpoint.js';
import { tokenResources } from '../token/resource-indicators.js';
import { takePublicDeviceAuthorizationSlot } from './authorization-throttle.js';
import { type DeviceRecord, deviceGrantId, deviceKey, retainMs, userCodeKey } from './device-records.js';
import { deviceSignInFits } from './sign-in.js';
import { formatUserCode, newUserCode } from './user-code.js';

/** RFC 6749 §3.3 scope-token characters. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
/** Tries at a user code nobody else holds; with 20^8 codes a second try is already rare. */
const USER_CODE_TRIES = 5;

function checkScope(app: App, scope: string | undefined): void {
  if (scope === undefined) return;
  const requested = scope.split(' ');
  if (requested.some((token) => !SCOPE_TOKEN.test(token)))
    throw new OAuthError('invalid_scope', 'scope must be space-separated scope tokens');
  if (app.scope === undefined) return;
  const allowed = new Set([...app.scope.split(' '), 'openid']);
  const refused = requested.filter((token) => !allowed.has(token));
  if (refused.length > 0) throw new OAuthError('invalid_scope', `scope not allowed for this application: ${quotedValues(refused)}`);
}

/**
 * Claims a user code for a grant id: the pointer is written only where none is (a one-key swap expecting absence),
 * so two live authorizations of one account never share a code.
 */
async function claimUserCode(context: SentinelContext, accountId: string, grantId: string, ttlMs: number): Promise<string> {
  for (let attempt = 0; attempt < USER_CODE_TRIES; attempt += 1) {
    const userCode = newUserCode();
    const claimed = await context.store.swap([{ key: userCodeKey(accountId, userCode), expect: null, value: grantId, ttlMs }]);
    if (claimed) return userCode;
  }
  throw new Error('no free user code after several tries');
}

/**
 * Handles a device authorization request.
 *
 * @example
 * // POST /sentinel/api/account/123/device_authorization  client_id=…&scope=openid%20profile
 * // 200 {"device_code":"…","user_code":"BCDF-GHJK","verification_uri":"…/device","expires_in":600,"interval":5,…}
 * return handleDeviceAuthorization(context, request, '123');
 */
export async function handleDeviceAuthorization(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
): Promise<SentinelResponse> {
  checkTokenQuery(request.query);
  const params = await readForm(request, context.config.bodyLimit);
  const { app } = await authenticateClient(context, accountId, request, params, { allowPublic: true });
  requireGrant(app, DEVICE_CODE_GRANT);
  const rawScope = single(params, 'scope');
  const scope = rawScope === '' ? undefined : rawScope;
  checkScope(app, scope);
  // RFC 8707: the device authorization request is the flow's authorization request, so its resources are checked
  // here (the ones the app may ask for; invalid_target otherwise) and bound to the device code.
  const resources = tokenResources(context, app, params);
  const deviceCode = randomSecret();
  const grantId = deviceGrantId(deviceCode);
  // A scope the person's sign-in could not keep is refused to the device now, before anything is stored or counted.
  const shape = { accountId, clientId: app.clientId, scope, userCode: newUserCode() };
  if (!deviceSignInFits(context, shape, grantId, app.name ?? app.clientId, request.mountPath)) {
    throw new OAuthError('invalid_scope', 'scope is too long for the sign-in on the verification page to keep');
  }
  // A public client's caller needs no credential, so a valid request of one counts against its address before
  // anything is written (deviceFlow.publicAuthorizationsPerAddress, authorization-throttle.ts); a refused or invalid
  // request stores no record.
  if (app.tokenEndpointAuthMethod === 'none') await takePublicDeviceAuthorizationSlot(context, clientIP(context.config, request));
  const { expiresIn, interval } = context.config.deviceFlow;
  const now = Math.floor(Date.now() / 1000);
  // Kept as long again after expiry, so that a device polling late hears expired_token rather than invalid_grant.
  const retainUntil = now + 2 * expiresIn;
  const base = {
    accountId,
    clientId: app.clientId,
    scope,
    ...(resources === undefined ? {} : { resources }),
    status: 'pending',
    expiresAt: now + expiresIn,
    retainUntil,
    interval,
  } as const;
  const userCode = await claimUserCode(context, accountId, grantId, retainUntil * 1000 - Date.now());
  const record: DeviceRecord = { ...base, userCode };
  await context.store.set(deviceKey(grantId), JSON.stringify(record), retainMs(record));
  try {
    context.emit({ type: 'device.authorized', accountId, clientId: app.clientId });
  } catch (error) {
    // Vetoed: the codes are never given out, so neither the record nor the user code it claimed may stay behind.
    await context.store.delete(deviceKey(grantId)).catch(() => undefined);
    await context.store.delete(userCodeKey(accountId, userCode)).catch(() => undefined);
    throw error;
  }
  const verificationUri = routeUrl(context.config, 'device', { accountId });
  const shown = formatUserCode(userCode);
  return noStoreJSON(200, {
    device_code: deviceCode,
    user_code: shown,
    verification_uri: verificationUri,
    verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(shown)}`,
    expires_in: expiresIn,
    interval,
  });
}
