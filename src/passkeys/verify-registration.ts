/**
 * The check of a new passkey's attestation, the same wherever a passkey is added (the offer after a sign-in, the
 * account page): this session's challenge, the service's origins and RP ID, and user verification required.
 */
import { type RegistrationResponseJSON, verifyRegistrationResponse } from '@simplewebauthn/server';
import type { SentinelContext } from '../http/context.js';
import type { PasskeyHooks, StoredPasskey } from './hooks.js';
import { relyingParty } from './options.js';

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

/**
 * Whether a user of the account already has a passkey with this credential id (WebAuthn Level 2 §7.1 step 26: the
 * RP should refuse it). The registering user's own passkeys always count; other users' when the hooks have
 * `findCredentialOwner`. Checked before `save` wherever a passkey is added.
 *
 * @example if (await credentialTaken(hooks, accountId, userId, passkey.id)) return alreadyRegistered();
 */
export async function credentialTaken(hooks: PasskeyHooks, accountId: string, userId: string, credentialId: string): Promise<boolean> {
  const own = await hooks.list({ accountId, userId });
  if (own.some((passkey) => passkey.id === credentialId)) return true;
  const owner = await hooks.findCredentialOwner?.({ accountId, credentialId });
  return owner !== undefined && owner !== null;
}
