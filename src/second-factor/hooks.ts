/**
 * What the host's user store adds for a second factor: the user's TOTP secret (RFC 6238), and a recovery path for
 * a user who lost the device. Both sit on the `users` option beside `authenticate`.
 */
import type { SentinelRequest } from '../http/messages.js';

/**
 * The second-factor hooks of the `users` option (TOTP: RFC 6238). `authenticate` asks for the step by answering
 * `{ id, secondFactor: 'totp' }`.
 *
 * @example
 * const users = {
 *   authenticate: async ({ username, password }) => ({ id: 'u-1', secondFactor: 'totp' }),
 *   totpSecret: async ({ userId }) => db.totpSecretOf(userId), // base32, as the authenticator app was given it
 *   recover: async ({ userId, code }) => db.useRecoveryCode(userId, code), // true once per code
 * };
 */
export interface SecondFactorHooks {
  /**
   * The user's base32 TOTP secret, or `null` when the user has none (the step then fails closed). At least 128 bits
   * (26 base32 characters; RFC 4226 §4 R6, 160 recommended): a shorter one, such as the common 16-character 80-bit
   * secret, fails the step with 500 and an `onError` that names its size, and never counts for step-up.
   */
  totpSecret?(input: { accountId: string; userId: string }): string | null | Promise<string | null>;
  /**
   * Checks a recovery code and, when it is right, uses it up (the host keeps codes hashed and single-use).
   * Throttled like the TOTP code; without this hook the page offers no recovery. It is called only by the request
   * that holds the sign-in's pending step and its interaction (both taken before the call, after every other hook
   * the sign-in asks; put back when the answer is `false` or the hook throws), so a code is spent only by a sign-in
   * that goes on, unless what follows fails: the store's writes of the session and the code, or an `onEvent` that
   * vetoes the sign-in's events (then the code stays spent, and the step goes back for another code). Check and use
   * up in one atomic step all the same:
   * two sign-ins of one user may present the same code at once, and only one may get `true`.
   */
  recover?(input: { accountId: string; userId: string; code: string; request: SentinelRequest }): boolean | Promise<boolean>;
}
