/**
 * Device authorizations (RFC 8628 §3.2): one record per device code, under `device:{gid}`, from the device
 * authorization request until its tokens are issued; and the user code's pointer to it, under
 * `device-user:{sha256(account, user code)}` (docs/ARCHITECTURE.md#stored-records).
 *
 * Every change of state — a poll noting its time, the user approving or denying, the poll that takes the tokens — is
 * a `swap` expecting the exact value read, so two approvals, or two polls, or an approval and a poll, cannot both win.
 * The grant id is derived from the device code as a code's is from the code: the record and the grant it turns into
 * share a hash tag, and the one swap that issues the tokens spends the record and creates the grant together.
 */
import type { SentinelContext } from '../http/context.js';
import { retryShortly } from '../errors.js';
import { en } from '../i18n/en.js';
import { digest } from '../lib/random-secrets.js';
import { catchRejection } from '../lib/thenable.js';
import { parseStoredRecord } from '../stores/stored-record.js';
import type { AmrValue } from '../assurance/levels.js';

/** Where a device authorization stands. */
export type DeviceStatus = 'pending' | 'approved' | 'denied' | 'issued';

/** What a device code stands for. Persisted as JSON under `device:{gid}`. */
export interface DeviceRecord {
  accountId: string;
  clientId: string;
  scope?: string | undefined;
  /** RFC 8707 resources the device asked tokens for (absent: the account's own audience). */
  resources?: string[] | undefined;
  /** The user code, canonical (no dash), for the confirmation page to repeat. */
  userCode: string;
  status: DeviceStatus;
  /** Seconds since the epoch after which the codes are expired (`expired_token`). */
  expiresAt: number;
  /** Seconds since the epoch until which the record is kept, so that late polls still hear `expired_token`. */
  retainUntil: number;
  /** Seconds the device must wait between polls; raised by 5 at each `slow_down` (RFC 8628 §3.5). */
  interval: number;
  /** Milliseconds since the epoch of the last poll that was answered. */
  lastPollAt?: number | undefined;
  /** Who approved (set with `approved`). */
  userId?: string | undefined;
  /** Seconds since the epoch when the approving user authenticated. */
  authTime?: number | undefined;
  /** How the approving user authenticated (RFC 8176); the tokens' `acr` follows from it. */
  amr?: AmrValue[] | undefined;
}

/** A record as read, with the exact stored value a swap must expect. */
export interface StoredDevice {
  grantId: string;
  record: DeviceRecord;
  stored: string;
}

/**
 * The grant id of a device code: a one-way hash (so the id, which access tokens carry as `gid`, reveals nothing),
 * under a label of its own so that no device code and authorization code ever share an id.
 */
export function deviceGrantId(deviceCode: string): string {
  return digest(`device-grant-id:${deviceCode}`).slice(0, 22);
}

/** The store key of a device authorization: `device:{gid}`, beside its future grant's `grant:{gid}`. */
export function deviceKey(grantId: string): string {
  return `device:{${grantId}}`;
}

/** The store key of a user code's pointer: the code appears only as a digest, scoped to its account. */
export function userCodeKey(accountId: string, userCode: string): string {
  return `device-user:${digest(`${accountId}\u0000${userCode}`)}`;
}

/** The milliseconds a record still has to live. */
export function retainMs(record: DeviceRecord): number {
  return Math.max(1, record.retainUntil * 1000 - Date.now());
}

/**
 * The statuses this version writes. Any other (store corruption, or a record a version with more statuses wrote during
 * a rolling upgrade) makes the record unreadable: the poll's last branch issues tokens for whatever is not pending,
 * denied or issued, so an unknown status must never reach it as if it said approved.
 */
const DEVICE_STATUSES: ReadonlySet<unknown> = new Set<DeviceStatus>(['pending', 'approved', 'denied', 'issued']);

function parseDeviceRecord(stored: string | null): DeviceRecord | null {
  return parseStoredRecord<DeviceRecord>(
    stored,
    (record) =>
      typeof record.accountId === 'string' &&
      typeof record.clientId === 'string' &&
      typeof record.userCode === 'string' &&
      DEVICE_STATUSES.has(record.status) &&
      typeof record.expiresAt === 'number' &&
      typeof record.retainUntil === 'number' &&
      typeof record.interval === 'number' &&
      (record.resources === undefined || (Array.isArray(record.resources) && record.resources.every((r) => typeof r === 'string'))),
  );
}

/**
 * The record of a grant id, or `null` when there is none. A value under a device key that is not a record is store
 * corruption: it fails the request rather than reading as absent.
 *
 * @example const found = await readDevice(context, deviceGrantId(deviceCode));
 */
export async function readDevice(context: SentinelContext, grantId: string): Promise<StoredDevice | null> {
  const stored = await context.store.get(deviceKey(grantId));
  if (stored === null) return null;
  const record = parseDeviceRecord(stored);
  if (record === null) throw new Error('the stored device authorization is unreadable');
  return { grantId, record, stored };
}

/**
 * The record a typed user code points to, or `null` (no such code, or expired out of the store).
 *
 * @example const found = await findByUserCode(context, accountId, normalizeUserCode(typed));
 */
export async function findByUserCode(context: SentinelContext, accountId: string, userCode: string): Promise<StoredDevice | null> {
  const grantId = await context.store.get(userCodeKey(accountId, userCode));
  if (grantId === null) return null;
  const found = await readDevice(context, grantId);
  return found !== null && found.record.accountId === accountId && found.record.userCode === userCode ? found : null;
}

/**
 * Replaces the record if it still holds the value read; `false` when another request changed it first.
 *
 * @example if (!(await replaceDevice(context, found, { ...found.record, status: 'denied' }))) retry();
 */
export async function replaceDevice(context: SentinelContext, found: StoredDevice, next: DeviceRecord): Promise<boolean> {
  return context.store.swap([{ key: deviceKey(found.grantId), expect: found.stored, value: JSON.stringify(next), ttlMs: retainMs(next) }]);
}

/** What a decision runs around its write: see {@link decideDevice}. */
export interface DecisionSteps {
  /** Before the first write, once the authorization is found open to the decision. */
  prepare?: ((record: DeviceRecord) => void | Promise<void>) | undefined;
  /** Once the write stood: the decision's audit event. */
  announce?: ((record: DeviceRecord) => void) | undefined;
}

/**
 * Moves a pending authorization to `approved` or `denied`, re-reading and retrying when a poll changed the record
 * in between (a poll only notes its time). Returns the record as it was when the change applied, or the record that
 * stopped it: anything but a pending, unexpired one is left alone.
 *
 * `prepare` (an approval's check of its app and its session index entry) runs once, on the first read that finds the
 * authorization still open to the decision, and before the record is written: a throw there stops the decision, which
 * then never applies. Should another decision win the swap after it (two browsers deciding the same code at once),
 * it prepared a decision that did not apply (`applied: false`, the caller takes back what it wrote).
 *
 * `announce` (the decision's `device.approved` or `device.denied`) runs only once the swap stood, so a decision that
 * lost to another, or never got written, is never announced. When it throws (an `onEvent` that vetoes), the record is
 * put back as it was read, and the error is the answer: the device goes on hearing `authorization_pending`. Should a
 * poll have taken the tokens of an approval in that instant, the approval stood and was used: the veto cannot take
 * it back, so it is told to `onError`, as a committed event's is, and the decision counts as applied.
 *
 * @throws OAuthError temporarily_unavailable (503, `Retry-After: 1`) when every write lost to the device's polls (a
 *   device polling in bursts): the decision did not apply, and the caller takes back what `prepare` wrote.
 * @example const outcome = await decideDevice(context, grantId, { status: 'approved', userId, authTime }, { announce: (record) => emit(record) });
 */
export async function decideDevice(
  context: SentinelContext,
  grantId: string,
  decision:
    | { status: 'approved'; userId: string; authTime: number; amr?: AmrValue[] | undefined }
    | { status: 'denied'; userId?: string | undefined },
  steps: DecisionSteps = {},
): Promise<{ applied: boolean; record: DeviceRecord | null }> {
  let prepared = false;
  // A poll every few seconds can change the record between our read and our swap; a handful of tries always suffices
  // for honest devices, and a device polling faster than that is slowed down by the same swaps.
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const found = await readDevice(context, grantId);
    if (found === null) return { applied: false, record: null };
    const { record } = found;
    if (record.status !== 'pending' || record.expiresAt <= Math.floor(Date.now() / 1000)) return { applied: false, record };
    if (!prepared) {
      await steps.prepare?.(record);
      prepared = true;
    }
    const next = { ...record, ...decision };
    let replaced: boolean;
    try {
      replaced = await replaceDevice(context, found, next);
    } catch (error) {
      // The write may have landed with its reply lost (a Redis timeout after Redis ran it). Put back as read, the
      // record is as undecided as the caller takes it to be when it withdraws the approval's entry and restores the
      // confirmation, so the same form decides again; left approved, the poll found no entry and answered
      // access_denied, the person's Allow lost. A store failing here as well leaves it; the first failure answers.
      await restoreDevice(context, found, next).catch(() => undefined);
      throw error;
    }
    if (replaced) {
      await announceDecision(context, found, next, steps.announce);
      return { applied: true, record };
    }
  }
  // Each lost swap was a poll's note: the device's own requests, not a fault of the service. Not a 500 for onError;
  // the decision never applied, so the person may make it again.
  throw retryShortly(en.deviceDecisionBusy);
}

/** Puts the record back as `found` read it, while it is still as `written` left it; whether it was put back. */
function restoreDevice(context: SentinelContext, found: StoredDevice, written: DeviceRecord): Promise<boolean> {
  return context.store.swap([
    { key: deviceKey(found.grantId), expect: JSON.stringify(written), value: found.stored, ttlMs: retainMs(found.record) },
  ]);
}

/** Announces a decision that stood; a veto puts the record back as it was read (see {@link decideDevice}). */
async function announceDecision(
  context: SentinelContext,
  found: StoredDevice,
  written: DeviceRecord,
  announce: ((record: DeviceRecord) => void) | undefined,
): Promise<void> {
  try {
    announce?.(found.record);
  } catch (error) {
    // A store failing here as well leaves the decision written; the veto's error is still the answer.
    if (await restoreDevice(context, found, written).catch(() => true)) throw error;
    try {
      catchRejection(context.config.onError?.(error, { route: 'onEvent', accountId: found.record.accountId }));
    } catch {
      // The host's reporter failed as well; the decision stood all the same.
    }
  }
}
