/**
 * Pending logout confirmations of RP-initiated logout: the request the "Sign out?" page was shown for, bound to the
 * browser's session and a CSRF token. The confirmation id travels in the form; the record lives in the Store under
 * `end-session:{sha256(id)}` (docs/ARCHITECTURE.md#stored-records) and is spent once.
 */
import type { SentinelContext } from '../../http/context.js';
import { digest, randomSecret } from '../../lib/random-secrets.js';
import { parseStoredRecord } from '../../stores/stored-record.js';

const KEY_PREFIX = 'end-session:';
const CONFIRMATION_ID = /^[A-Za-z0-9_-]{43}$/;

/** A pending confirmation, kept for `interactionTtl` seconds. */
export interface LogoutConfirmation {
  accountId: string;
  clientId?: string | undefined;
  returnTo?: string | undefined;
  state?: string | undefined;
  /** Digest of the session id the page was shown for: the post must come with that same session. */
  sessionDigest: string;
  csrfToken: string;
  /** The request's `ui_locales`, so the "signed out" page after the confirmation speaks the same language. */
  uiLocales?: string | undefined;
  /**
   * The `id_token_hint`'s user, `sid` and `auth_time` when its `sid` names another session than the browser's: that
   * session, should it have lapsed with grants alive, is ended with the browser's once the user confirms.
   */
  lapsedHint?: { sub: string; sid: string; authTime?: number | undefined } | undefined;
}

function confirmationKey(id: string): string {
  return `${KEY_PREFIX}${digest(id)}`;
}

function parseConfirmation(stored: string | null): LogoutConfirmation | null {
  return parseStoredRecord<LogoutConfirmation>(
    stored,
    (record) => typeof record.accountId === 'string' && typeof record.sessionDigest === 'string' && typeof record.csrfToken === 'string',
  );
}

/** Stores a confirmation and returns its new id (256 random bits). */
export async function saveLogoutConfirmation(context: SentinelContext, record: LogoutConfirmation): Promise<string> {
  const id = randomSecret();
  await context.store.set(confirmationKey(id), JSON.stringify(record), context.config.interactionTtl * 1000);
  return id;
}

/** The pending confirmation of `id`, without spending it; `null` for a malformed, unknown or expired id. */
export async function findLogoutConfirmation(context: SentinelContext, id: string): Promise<LogoutConfirmation | null> {
  if (!CONFIRMATION_ID.test(id)) return null;
  return parseConfirmation(await context.store.get(confirmationKey(id)));
}

/** Spends a confirmation: `true` for exactly one of concurrent callers. */
export async function spendLogoutConfirmation(context: SentinelContext, id: string): Promise<boolean> {
  return (await context.store.take(confirmationKey(id))) !== null;
}
