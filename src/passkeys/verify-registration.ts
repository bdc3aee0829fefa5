/**
 * The check of a new passkey's attestation, the same wherever a passkey is added (the offer after a sign-in, the
 * account page): this session's challenge, the service's origins and RP ID, not in a frame of another origin, and
 * user verification required.
 */
import { type RegistrationResponseJSON, verifyRegistrationResponse } from '@simplewebauthn/server';
import type { SentinelContext } from '../http/context.js';
import { digest, randomSecret } from '../lib/random-secrets.js';
import { CEREMONY_TIMEOUT_MS } from './challenge.js';
import type { PasskeyHooks, StoredPasskey } from './hooks.js';
import { relyingParty } from './options.js';
import { framedCeremony } from './credential-json.js';

/** The longest credential id a passkey may have, in bytes (WebAuthn Level 3 §7.1, the credentialId check). */
const MAX_CREDENTIAL_ID_BYTES = 1023;

/**
 * The passkey to save when `attestation` answers `challenge`, `null` when it does not verify (a malformed or wrong
 * answer never throws).
 * @example const passkey = await verifiedNewPasskey(context, challenge, attestation); if (passkey) await hooks.save({ accountId, userId, passkey });
 */
export async function verifiedNewPasskey(
  context: SentinelContext,
  challenge: string,
  attestation: RegistrationResponseJSON,
): Promise<StoredPasskey | null> {
  // Never in a frame of another origin (credential-json.ts): the service's pages are never framed.
  if (framedCeremony(attestation.response.clientDataJSON)) return null;
  const rp = relyingParty(context.config);
  let result: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    result = await verifyRegistrationResponse({
      response: attestation,
      expectedChallenge: challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.rpId,
      requireUserVerification: true,
    });
  } catch {
    return null;
  }
  if (!result.verified) return null;
  const { credential, credentialDeviceType } = result.registrationInfo;
  // WebAuthn Level 3 §7.1 (the credentialId check): a longer id fails the ceremony; the host would store it, and
  // every sign-in would carry it.
  if (Buffer.from(credential.id, 'base64url').length > MAX_CREDENTIAL_ID_BYTES) return null;
  return {
    id: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: credential.transports,
    // Kept so that a later assertion cannot claim another kind of credential (sign-in.ts).
    backupEligible: credentialDeviceType === 'multiDevice',
    createdAt: Date.now(),
  };
}

/** What became of a verified new passkey: saved, refused as an id a user has, or refused as one too many. */
export type SaveOutcome = 'saved' | 'taken' | 'limit';

/**
 * Why the new passkey may not be saved, or `null`: a user of the account already has its credential id (WebAuthn
 * Level 2 §7.1 step 26: the RP should refuse it; the registering user's own passkeys always count, other users' when
 * the hooks have `findCredentialOwner`), or the user has `passkeys.maxPerUser` passkeys already.
 */
async function refusal(
  context: SentinelContext,
  hooks: PasskeyHooks,
  input: { accountId: string; userId: string; credentialId: string },
): Promise<'taken' | 'limit' | null> {
  const { accountId, userId, credentialId } = input;
  const own = await hooks.list({ accountId, userId });
  if (own.some((passkey) => passkey.id === credentialId)) return 'taken';
  const owner = await hooks.findCredentialOwner?.({ accountId, credentialId });
  if (owner !== undefined && owner !== null) return 'taken';
  return own.length >= context.config.passkeys.maxPerUser ? 'limit' : null;
}

/**
 * Saves a verified new passkey for the user, unless a user of the account already has its credential id or another
 * registration of that id is under way (`'taken'`), or the user has `passkeys.maxPerUser` passkeys (`'limit'`):
 * nothing is saved then.
 *
 * Why a claim around the check and the save: two registrations of one id at once (two tabs, the offer and the account
 * page, a forger replaying an id) would otherwise both pass the check before either saves, and the second save
 * would replace the first one's key and counter, or leave two rows for one credential in a store that appends. The
 * claim is a one-key `swap` expecting absence (`passkey-registration:`, docs/ARCHITECTURE.md#stored-records), so of
 * concurrent registrations on any instance sharing the store one holds it; it is released once the save is done or
 * failed, and lapses by itself after the ceremony's timeout should its instance die meanwhile.
 *
 * Why a limit: every passkey is a row in the host's user store that each sign-in, each registration and the account
 * page read, and the account page lists at most 200 of them; unbounded, one signed-in user (or a script with a
 * software authenticator in their session) could add rows without end, and passkeys past the page's bound could be
 * neither seen nor removed there.
 *
 * @example if ((await saveUnlessTaken(context, hooks, { accountId, userId, passkey })) === 'taken') return alreadyRegistered();
 */
export async function saveUnlessTaken(
  context: SentinelContext,
  hooks: PasskeyHooks,
  input: { accountId: string; userId: string; passkey: StoredPasskey },
): Promise<SaveOutcome> {
  const { accountId, userId, passkey } = input;
  const key = `passkey-registration:${digest(`${accountId}\u0000${passkey.id}`)}`;
  const holder = randomSecret();
  if (!(await context.store.swap([{ key, expect: null, value: holder, ttlMs: CEREMONY_TIMEOUT_MS }]))) return 'taken';
  try {
    const refused = await refusal(context, hooks, { accountId, userId, credentialId: passkey.id });
    if (refused !== null) return refused;
    await hooks.save({ accountId, userId, passkey });
    return 'saved';
  } finally {
    // Only this registration's own claim, never one taken after it lapsed. A release that fails changes no outcome:
    // the claim lapses by itself, and the saved passkey is what refuses its id from now on.
    await context.store.swap([{ key, expect: holder, value: null }]).catch(() => false);
  }
}
