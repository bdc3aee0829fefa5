/**
 * Step-up at the login page (OpenID Connect Core §3.1.2.1 `acr_values`): after a right password, which method takes
 * this user to the level the request asks for. A user can reach `mfa` when `users.totpSecret` returns a usable
 * secret for them (whether or not `authenticate` asked for the step) or has a passkey; `phishing-resistant` only
 * with a passkey.
 */
import type { SentinelContext } from '../http/context.js';
import { type AcrValue, acrLevel, acrOf, ACR_MFA, ACR_PASSWORD, ACR_PHISHING_RESISTANT } from '../assurance/levels.js';
import { webAuthnUserID } from '../passkeys/user-handle.js';
import { totpSecretProblem } from './totp.js';

/**
 * `totp`: the TOTP step; `passkey`: only a passkey sign-in reaches the level (the login page says so);
 * `none`: the password is enough; `unreachable`: nothing this user has reaches it.
 */
export type StepUpMethod = 'none' | 'totp' | 'passkey' | 'unreachable';

/**
 * Whether `users.totpSecret` returns a secret for the user; with `usable`, only one that can check a code. Step-up
 * asks for a usable one, so an unusable secret never leads to a TOTP step that can only fail; the passkey enrolment
 * level counts any secret, so a broken one never lowers the level a passkey may be added at.
 */
async function hasTotpSecret(context: SentinelContext, accountId: string, userId: string, usable: boolean): Promise<boolean> {
  const totpSecret = context.config.users?.totpSecret;
  if (typeof totpSecret !== 'function') return false;
  const secret = await totpSecret({ accountId, userId });
  return typeof secret === 'string' && secret !== '' && (!usable || totpSecretProblem(secret) === null);
}

async function hasPasskey(context: SentinelContext, accountId: string, userId: string): Promise<boolean> {
  const passkeys = context.config.users?.passkeys;
  if (passkeys === undefined || webAuthnUserID(userId) === null) return false;
  return (await passkeys.list({ accountId, userId })).length > 0;
}

/**
 * The method after the password for a user whose store asked for `askedTotp`, under a request for `required`.
 *
 * @example
 * const method = await stepUpMethod(context, { accountId, userId, askedTotp: false, required: ACR_MFA }); // 'totp'
 */
export async function stepUpMethod(
  context: SentinelContext,
  input: { accountId: string; userId: string; askedTotp: boolean; required: AcrValue | undefined },
): Promise<StepUpMethod> {
  const need = acrLevel(input.required);
  if (need < acrLevel(ACR_MFA)) return input.askedTotp ? 'totp' : 'none';
  if (need < acrLevel(ACR_PHISHING_RESISTANT)) {
    if (input.askedTotp || (await hasTotpSecret(context, input.accountId, input.userId, true))) return 'totp';
  }
  return (await hasPasskey(context, input.accountId, input.userId)) ? 'passkey' : 'unreachable';
}

/**
 * The level a sign-in must have reached to add or remove a passkey of this user: the strongest the user can reach
 * otherwise. A passkey signs in at the strongest level there is, so adding one on a weaker sign-in would hand whoever
 * has that sign-in (a password alone) the level of the factor they lack, and removing one would lower the level to
 * the weaker sign-in's: `phishing-resistant` when the user has a passkey, `mfa` when `users.totpSecret` returns a
 * secret for them, else `password`.
 *
 * @example
 * if (acrLevel(acrOf(session.amr)) < acrLevel(await passkeyEnrolmentLevel(context, { accountId, userId }))) refuse();
 */
export async function passkeyEnrolmentLevel(context: SentinelContext, input: { accountId: string; userId: string }): Promise<AcrValue> {
  if (await hasPasskey(context, input.accountId, input.userId)) return ACR_PHISHING_RESISTANT;
  if (await hasTotpSecret(context, input.accountId, input.userId, false)) return ACR_MFA;
  return ACR_PASSWORD;
}

/**
 * Whether a sign-in of `amr` may add a passkey for this user ({@link passkeyEnrolmentLevel}).
 *
 * @example
 * if (!(await mayEnrolPasskey(context, { accountId, userId, amr }))) return refuse();
 */
export async function mayEnrolPasskey(
  context: SentinelContext,
  input: { accountId: string; userId: string; amr: readonly string[] | undefined },
): Promise<boolean> {
  return acrLevel(acrOf(input.amr)) >= acrLevel(await passkeyEnrolmentLevel(context, input));
}
