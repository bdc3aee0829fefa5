/**
 * The account page's passkeys: the list (through `users.passkeys.list`), adding one (a WebAuthn registration
 * ceremony like the login page's offer, but bound to the signed-in session instead of a pending sign-in), and removing
 * one (through the optional `users.passkeys.remove`).
 *
 * The challenge is kept under the session's digest (`passkey-challenge:register:account-…`, docs/ARCHITECTURE.md#stored-records)
 * and taken once, so an attestation answers only the ceremony this session started.
 */
import { OAuthError } from '../errors.js';
import type { SentinelContext } from '../http/context.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { digest } from '../lib/random-secrets.js';
import { takeChallenge } from '../passkeys/challenge.js';
import { passkeyCreationOptions } from '../passkeys/creation-options.js';
import { parseAttestation } from '../passkeys/credential-json.js';
import type { PasskeyHooks, StoredPasskey } from '../passkeys/hooks.js';
import { saveUnlessTaken, verifiedNewPasskey } from '../passkeys/verify-registration.js';
import { webAuthnUserID } from '../passkeys/user-handle.js';
import type { AccountVisit } from './account-visit.js';
import { readAccountPost } from './account-post.js';
import { ACCOUNT_LIST_BOUND } from './account-paging.js';
import { mayEnrolPasskey } from '../second-factor/step-up-method.js';
// The English text is the description, so that the error page shows it in the page's language (translate()).
import { en } from '../i18n/en.js';

/** The ceremony id of a session: distinct from every interaction id (those have no `account-` prefix). */
function ceremonyOf(visit: AccountVisit): string {
  return `account-${digest(visit.sessionId)}`;
}

/**
 * The host's passkey hooks, or `undefined` when passkeys are not enabled.
 *
 * @example
 * const hooks = passkeyHooks(context);
 */
export function passkeyHooks(context: SentinelContext): PasskeyHooks | undefined {
  return context.config.users?.passkeys;
}

/**
 * Why this visit's sign-in may not add or remove a passkey, or `null` when it may.
 *
 * `weaker`: it must be as strong as any the user has (a passkey sign-in when the user has a passkey, the TOTP step when
 * the user has a TOTP secret), or a password alone would add the passkey that skips them. Removing needs the same: a
 * password alone could otherwise remove the user's passkeys, which lowers the level to the password's, and then add
 * its own.
 *
 * `stale`: it must also be recent, at most `account.maxSignInAge` seconds old (with `max_age`'s `>=`, so the bound
 * itself is too old). Whoever finds a browser left signed in for hours could otherwise add a passkey of their own,
 * which outlives the session, the password and every sign-out. The page offers a new sign-in at that level instead.
 *
 * @example
 * if ((await passkeyChangeRefusal(context, visit)) !== null) return stepUpLink();
 */
export async function passkeyChangeRefusal(context: SentinelContext, visit: AccountVisit): Promise<'weaker' | 'stale' | null> {
  const { accountId, session } = visit;
  if (!(await mayEnrolPasskey(context, { accountId, userId: session.userId, amr: session.amr }))) return 'weaker';
  const age = Math.floor(Date.now() / 1000) - session.authTime;
  return age >= context.config.account.maxSignInAge ? 'stale' : null;
}

/**
 * {@link passkeyChangeRefusal} for a change the user asked for: a refusal is audited (`account.denied`, before
 * anything is read or changed) and resolves to the message that says what to do.
 */
async function refusedChange(context: SentinelContext, visit: AccountVisit): Promise<string | null> {
  const refusal = await passkeyChangeRefusal(context, visit);
  if (refusal === null) return null;
  const reason =
    refusal === 'weaker'
      ? 'sign-in weaker than the user has, for a passkey change'
      : 'sign-in older than account.maxSignInAge, for a passkey change';
  context.emit({ type: 'account.denied', accountId: visit.accountId, userId: visit.session.userId, reason });
  return refusal === 'weaker' ? en.accountPasskeyStepUp : en.accountPasskeyReauthenticate;
}

/**
 * The user's passkeys, newest first, at most {@link ACCOUNT_LIST_BOUND} (a user store answering thousands must not
 * make a page of megabytes); empty without passkey hooks.
 *
 * @example
 * const passkeys = await listPasskeys(context, visit);
 */
export async function listPasskeys(context: SentinelContext, visit: AccountVisit): Promise<StoredPasskey[]> {
  const hooks = passkeyHooks(context);
  if (hooks === undefined) return [];
  const list = await hooks.list({ accountId: visit.accountId, userId: visit.session.userId });
  return [...list].sort((a, b) => b.createdAt - a.createdAt).slice(0, ACCOUNT_LIST_BOUND);
}

/**
 * `POST …/account/passkeys/options`: the creation options of a new passkey for the signed-in user (CSRF-bound).
 *
 * @example
 * { name: 'account-passkey-options', methods: ['POST'], path: '/api/account/{accountId}/account/passkeys/options', handler: (c, r, p) => handleAccountPasskeyOptions(c, r, p.accountId) }
 */
export async function handleAccountPasskeyOptions(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
): Promise<SentinelResponse> {
  const hooks = passkeyHooks(context);
  if (!context.config.account.enabled || hooks === undefined) {
    throw new OAuthError('invalid_request', 'Passkeys are not enabled.', { status: 404 });
  }
  const { visit } = await readAccountPost(context, request, accountId);
  const userID = webAuthnUserID(visit.session.userId);
  if (userID === null) throw new OAuthError('invalid_request', 'Passkeys are not available for this user.', { status: 400 });
  const refused = await refusedChange(context, visit);
  if (refused !== null) throw new OAuthError('invalid_request', refused, { status: 403 });
  const { userId } = visit.session;
  const userName = await passkeyUserName(context, visit);
  return passkeyCreationOptions(context, hooks, { accountId, userId, userID, userName, ceremony: ceremonyOf(visit) });
}

/** The most characters of a passkey's account name (WebAuthn §6.4.1: an authenticator may truncate past 64 bytes). */
const MAX_USER_NAME = 64;

/**
 * What the authenticator shows as the new passkey's account (WebAuthn `user.name`, "a human-palatable identifier"):
 * the name the user signs in with, as the claims hook gives it (`preferred_username`, else `email`), as the offer
 * after a sign-in shows the typed username. The user id only without either: it is the host's opaque id, which the
 * user's passkey manager would list, next to the passkeys of other sites, as a name nobody knows.
 */
async function passkeyUserName(context: SentinelContext, visit: AccountVisit): Promise<string> {
  const claims = context.config.users?.claims;
  const { accountId, session } = visit;
  if (claims === undefined) return session.userId;
  const found = await claims({ accountId, userId: session.userId, scopes: ['openid', 'profile', 'email'] });
  for (const value of [found?.preferred_username, found?.email]) {
    if (typeof value === 'string' && value.trim() !== '') return Array.from(value.trim()).slice(0, MAX_USER_NAME).join('');
  }
  return session.userId;
}

/** What became of a posted passkey: the account page's `?done=` notice. */
export type PasskeyAddition = 'passkey-added' | 'passkey-not-added' | 'passkey-already-registered' | 'passkey-limit';

/**
 * Verifies the posted attestation against this session's challenge and saves the passkey. `passkey-not-added` when
 * it does not verify (no challenge, a malformed or wrong answer), `passkey-already-registered` when a user of the
 * account already has its credential id (WebAuthn §7.1 step 26), `passkey-limit` when the user has
 * `passkeys.maxPerUser` passkeys already: nothing is saved.
 *
 * @example
 * const done = await addPasskey(context, visit, single(form, 'attestation')); // 'passkey-added'
 */
export async function addPasskey(
  context: SentinelContext,
  visit: AccountVisit,
  attestationJSON: string | undefined,
): Promise<PasskeyAddition> {
  const hooks = passkeyHooks(context);
  if (hooks === undefined || (await refusedChange(context, visit)) !== null) return 'passkey-not-added';
  const challenge = await takeChallenge(context, 'register', ceremonyOf(visit));
  const attestation = parseAttestation(attestationJSON);
  if (challenge === null || attestation === null) return 'passkey-not-added';
  const passkey = await verifiedNewPasskey(context, challenge, attestation);
  if (passkey === null) return 'passkey-not-added';
  const { accountId, session } = visit;
  const saved = await saveUnlessTaken(context, hooks, { accountId, userId: session.userId, passkey });
  if (saved === 'taken') return 'passkey-already-registered';
  if (saved === 'limit') return 'passkey-limit';
  // Saved: committed, so a throwing onEvent does not tell the user a passkey they now have was not added.
  context.emit({ type: 'passkey.added', accountId, userId: session.userId }, 'committed');
  return 'passkey-added';
}

/**
 * Removes one of the signed-in user's passkeys. Only a credential the hooks list for this user is passed to
 * `remove`, so a posted id of another user's passkey changes nothing. `false` when there was no such passkey.
 *
 * @throws OAuthError 403 when this sign-in is weaker than the user's strongest or not recent ({@link passkeyChangeRefusal}):
 * nothing is removed, and the message says to sign in again.
 * @example
 * await removePasskey(context, visit, single(form, 'credential_id'));
 */
export async function removePasskey(context: SentinelContext, visit: AccountVisit, credentialId: string | undefined): Promise<boolean> {
  const hooks = passkeyHooks(context);
  if (hooks?.remove === undefined || credentialId === undefined) return false;
  // Checked before the id, so a weaker sign-in learns nothing of which ids are the user's.
  const refused = await refusedChange(context, visit);
  if (refused !== null) throw new OAuthError('invalid_request', refused, { status: 403 });
  const { accountId } = visit;
  const userId = visit.session.userId;
  const owned = (await hooks.list({ accountId, userId })).some((passkey) => passkey.id === credentialId);
  if (!owned) return false;
  await hooks.remove({ accountId, userId, credentialId });
  // Removed: committed, so a throwing onEvent does not report the removal as failed.
  context.emit({ type: 'passkey.removed', accountId, userId }, 'committed');
  return true;
}
