/**
 * The creation options of a new passkey (a WebAuthn registration ceremony), the same wherever one is added: the
 * login page's offer after a password sign-in and the account page. One place sets what every passkey of the service
 * must be — discoverable (it signs in without a username), user-verified, without attestation — so the two ways in
 * cannot drift apart.
 */
import { generateRegistrationOptions } from '@simplewebauthn/server';
import type { SentinelContext } from '../http/context.js';
import { noStoreJSON, type SentinelResponse } from '../http/messages.js';
import { OAuthError } from '../errors.js';
import { en } from '../i18n/en.js';
import { CEREMONY_TIMEOUT_MS, newChallenge } from './challenge.js';
import type { PasskeyHooks } from './hooks.js';
import { relyingParty } from './options.js';
import { readPasskeys } from './stored-passkeys.js';

/** Who the new passkey is for, and the ceremony its challenge is kept under. */
export interface CreationRequest {
  accountId: string;
  userId: string;
  /** The WebAuthn user handle of `userId` (user-handle.ts). */
  userID: Uint8Array<ArrayBuffer>;
  /** What the authenticator shows as the account's name. */
  userName: string;
  /** The id the challenge is stored under and later taken with (an interaction id, or the account page's ceremony). */
  ceremony: string;
}

/**
 * Answers the creation options of a new passkey: a fresh challenge, and the user's existing passkeys excluded (an
 * authenticator that holds one refuses to make another). A user with `passkeys.maxPerUser` passkeys gets `400`.
 *
 * @example
 * return passkeyCreationOptions(context, hooks, { accountId, userId, userID, userName: username ?? userId, ceremony: interactionId });
 */
export async function passkeyCreationOptions(
  context: SentinelContext,
  hooks: PasskeyHooks,
  request: CreationRequest,
): Promise<SentinelResponse> {
  // `null` transports read as absent: the browser refuses options whose excluded credential has `transports: null`.
  const existing = await readPasskeys(hooks, { accountId: request.accountId, userId: request.userId });
  // Refused before the ceremony, not only at the save: the authenticator would otherwise make a discoverable
  // credential the service then refuses, left behind in the user's passkey manager.
  if (existing.length >= context.config.passkeys.maxPerUser) {
    throw new OAuthError('invalid_request', en.accountPasskeyLimit, { status: 400 });
  }
  const rp = relyingParty(context.config);
  const challenge = await newChallenge(context, 'register', request.ceremony);
  const options = await generateRegistrationOptions({
    rpName: rp.rpName,
    rpID: rp.rpId,
    userName: request.userName,
    userID: request.userID,
    challenge: Buffer.from(challenge, 'base64url'),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((passkey) => ({ id: passkey.id, transports: passkey.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
  return noStoreJSON(200, options);
}
