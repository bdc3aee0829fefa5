/**
 * The check made when a person approves a device authorization: the app that asked for it is looked up again. The
 * authorization lived up to its `expires_in` meanwhile, and the app may have been disabled or deleted, or lost the
 * device code grant. The device's poll would be refused while that lasts, but the approval itself would stay in the
 * record: an app enabled again (or given the grant back) before the code expires would collect tokens the person
 * approved while the operator had it switched off. So, as `authorize/request/still-deliverable.ts` does for a code,
 * an approval for an app that can no longer use the flow is refused and nothing is recorded.
 */
import { DEVICE_CODE_GRANT } from '../apps/app.js';
import { OAuthError } from '../errors.js';
import type { SentinelContext } from '../http/context.js';
import type { DeviceRecord } from './device-records.js';

/**
 * Throws a 400 page unless the device authorization's app is still enabled and registered for the device code
 * grant. A failing app store throws as it does (the edge's `500 server_error`): nothing is approved either way.
 *
 * @example
 * await assertStillApprovable(context, record);
 */
export async function assertStillApprovable(context: SentinelContext, record: DeviceRecord): Promise<void> {
  const app = await context.apps.findApp(record.accountId, record.clientId);
  if (app === null || app.accountId !== record.accountId || !app.grantTypes.includes(DEVICE_CODE_GRANT)) {
    throw new OAuthError('invalid_request', 'This application can no longer be signed in on a device. Nothing was allowed.');
  }
}
