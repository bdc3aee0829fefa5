/**
 * The step between sign-in and decision: who signed in for which device authorization, parked under
 * `device-confirm:{id}` while the person reads the app's name and chooses (docs/ARCHITECTURE.md#stored-records).
 * The browser carries only the opaque id; the record carries the confirmation form's CSRF token and the digest of the
 * session that signed in (only that browser session may open it), and is taken once.
 */
import type { SentinelContext } from '../http/context.js';
import { routePath } from '../http/route-paths.js';
import { randomSecret } from '../lib/random-secrets.js';
import { withUiLocales } from '../i18n/page-locale.js';
import { parseStoredRecord } from '../stores/stored-record.js';
import type { DeviceInteraction, InteractionRecord } from '../authorize/state/interaction.js';
import type { AmrValue } from '../assurance/levels.js';

/** What a confirmation stands for. */
export interface DeviceConfirmation {
  accountId: string;
  grantId: string;
  /** The app's display name (its id when it has none). */
  appName: string;
  /** The user code, canonical, repeated on the page so the person can compare it with the device's screen. */
  userCode: string;
  userId: string;
  /**
   * The digest of the browser session that signed in (its store key's, never the id): only the browser holding that
   * session opens and decides the confirmation, not another session of the same user.
   */
  sessionDigest: string;
  /** Seconds since the epoch when the user authenticated. */
  authTime: number;
  /** How the user authenticated (RFC 8176), carried to the device's tokens as a code carries it. */
  amr?: AmrValue[] | undefined;
  /** The confirmation form's CSRF token; compared in constant time. */
  csrfToken: string;
  /** The host's mount prefix, for the form's action. */
  mountPath: string;
}

/** Confirmation ids are {@link randomSecret} values; anything else is not looked up. */
const CONFIRMATION_ID = /^[A-Za-z0-9_-]{43}$/;

function confirmationKey(id: string): string {
  return `device-confirm:${id}`;
}

function parse(stored: string | null): DeviceConfirmation | null {
  return parseStoredRecord<DeviceConfirmation>(
    stored,
    (record) =>
      typeof record.accountId === 'string' &&
      typeof record.grantId === 'string' &&
      typeof record.userId === 'string' &&
      // A record of an earlier version, bound to the user only, reads as expired: the person enters the code again.
      typeof record.sessionDigest === 'string' &&
      typeof record.csrfToken === 'string' &&
      typeof record.authTime === 'number',
  );
}

/**
 * Parks a confirmation and returns its id.
 * @example const id = await createConfirmation(context, { accountId, grantId, appName, userCode, userId, sessionDigest, authTime, mountPath });
 */
export async function createConfirmation(context: SentinelContext, input: Omit<DeviceConfirmation, 'csrfToken'>): Promise<string> {
  const id = randomSecret();
  const record: DeviceConfirmation = { ...input, csrfToken: randomSecret() };
  await context.store.set(confirmationKey(id), JSON.stringify(record), context.config.interactionTtl * 1000);
  return id;
}

/**
 * The confirmation, or `null` when unknown, expired or already used.
 * @example const confirmation = await findConfirmation(context, id);
 */
export async function findConfirmation(context: SentinelContext, id: string | undefined): Promise<DeviceConfirmation | null> {
  if (id === undefined || !CONFIRMATION_ID.test(id)) return null;
  return parse(await context.store.get(confirmationKey(id)));
}

/**
 * Atomically ends the confirmation; of concurrent decisions exactly one gets it.
 * @example const taken = await takeConfirmation(context, id);
 */
export async function takeConfirmation(context: SentinelContext, id: string): Promise<DeviceConfirmation | null> {
  if (!CONFIRMATION_ID.test(id)) return null;
  return parse(await context.store.take(confirmationKey(id)));
}

/**
 * Puts back a confirmation its decision took but could not apply (the device's polls kept changing the authorization,
 * a 503; a store failure or a vetoing onEvent, a 500): the person's same form decides again. Only the request that
 * took it puts it back, so it stays single use.
 * @example await restoreConfirmation(context, id, taken);
 */
export async function restoreConfirmation(context: SentinelContext, id: string, confirmation: DeviceConfirmation): Promise<void> {
  await context.store.set(confirmationKey(id), JSON.stringify(confirmation), context.config.interactionTtl * 1000);
}

/**
 * The confirmation page of an id: path-absolute, with the host's mount prefix, and the `ui_locales` the person's
 * pages have spoken so far (none: the browser's language).
 * @example redirect(303, confirmationURL(context, mountPath, accountId, id, requestUiLocales(request)))
 */
export function confirmationURL(
  context: SentinelContext,
  mountPath: string | undefined,
  accountId: string,
  id: string,
  uiLocales: readonly string[] | undefined,
): string {
  const path = `${mountPath ?? ''}${routePath(context.config, 'device-confirm', { accountId })}?confirmation=${encodeURIComponent(id)}`;
  return withUiLocales(path, uiLocales);
}

/**
 * The end of a device sign-in (the session is already made): the confirmation page, where the person sees the app's
 * name and the code and decides. The device's grant does not join the browser's session: signing out on the phone
 * that approved a TV does not disconnect the TV. It gets an index entry of its own (`device-session.ts`).
 *
 * `announce` (the sign-in's `session.created`) runs once the confirmation is written, as an application's sign-in
 * announces its session once its code is: a confirmation that could not be written fails the sign-in, whose session
 * is then taken back, and is never announced. When it throws (an `onEvent` that vetoes), the confirmation is deleted
 * again.
 *
 * @example return deviceConfirmationLocation(context, interaction, interaction.device, { userId, sessionDigest, authTime }, announce);
 */
export async function deviceConfirmationLocation(
  context: SentinelContext,
  interaction: InteractionRecord,
  device: DeviceInteraction,
  user: { userId: string; sessionDigest: string; authTime: number; amr?: AmrValue[] | undefined },
  announce?: () => void,
): Promise<string> {
  const { accountId, clientId, clientName } = interaction.request;
  const id = await createConfirmation(context, {
    accountId,
    grantId: device.grantId,
    appName: clientName ?? clientId,
    userCode: device.userCode,
    userId: user.userId,
    sessionDigest: user.sessionDigest,
    authTime: user.authTime,
    ...(user.amr === undefined ? {} : { amr: user.amr }),
    mountPath: interaction.mountPath,
  });
  try {
    announce?.();
  } catch (error) {
    // The veto's error is the answer; a failing delete leaves a confirmation no browser is sent to, which expires.
    await context.store.delete(confirmationKey(id)).catch(() => undefined);
    throw error;
  }
  return confirmationURL(context, interaction.mountPath, accountId, id, interaction.request.uiLocales);
}
