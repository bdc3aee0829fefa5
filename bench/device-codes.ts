/**
 * The device-poll rows' preparation: before the window of a round, the runner asks the freshly started server for
 * many device codes (RFC 8628 §3.1) at its device authorization endpoint, so that the window measures polls only.
 */
import { ACCOUNT_ID, CLIENT_ID, CLIENT_SECRET, DEVICE_CODES_PER_ROUND, FORM_CONTENT_TYPE, HOST } from './fixtures.js';
import type { Workload } from './registry.js';

/** Pending device codes of one server, and where the next poll starts. */
export interface DeviceCodes {
  codes: string[];
  next: number;
}

/** Requests in flight while preparing: enough to keep a server busy, few enough not to time out on a shared machine. */
const CONCURRENCY = 16;

/**
 * Asks the server of `workload` for `count` device codes (sentinel-idp: `/device_authorization` of the account;
 * oidc-provider: `/device/auth`). Any answer but 200 with a device code fails the row.
 */
export async function prepareDeviceCodes(workload: Workload, port: number, count = DEVICE_CODES_PER_ROUND): Promise<DeviceCodes> {
  const path = workload === 'device-poll' ? `/sentinel/api/account/${ACCOUNT_ID}/device_authorization` : '/device/auth';
  const url = `http://${HOST}:${port}${path}`;
  const body = new URLSearchParams({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, scope: 'openid' }).toString();
  const codes: string[] = [];
  const one = async (): Promise<void> => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': FORM_CONTENT_TYPE },
      body,
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    const code = response.status === 200 ? (JSON.parse(text) as { device_code?: unknown }).device_code : undefined;
    if (typeof code !== 'string') throw new Error(`device authorization answered ${response.status} ${text.slice(0, 200)}`);
    codes.push(code);
  };
  let started = 0;
  const worker = async (): Promise<void> => {
    while (started < count) {
      started += 1;
      await one();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { codes, next: 0 };
}
