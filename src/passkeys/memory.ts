/**
 * Passkeys in memory, for the examples and tests: lost on restart and not shared between instances, so a
 * production host stores them with its users instead.
 */
import type { PasskeyHooks, StoredPasskey } from './hooks.js';

/**
 * An in-memory `users.passkeys` (public keys as COSE keys, RFC 9052 §7).
 *
 * @example
 * const passkeys = new MemoryPasskeys();
 * createSentinel({ ..., users: { authenticate, passkeys }, passkeys: { offerRegistration: true } });
 */
export class MemoryPasskeys implements PasskeyHooks {
  readonly #byUser = new Map<string, StoredPasskey[]>();

  #key(accountId: string, userId: string): string {
    return `${accountId}\u0000${userId}`;
  }

  list(input: { accountId: string; userId: string }): readonly StoredPasskey[] {
    return (this.#byUser.get(this.#key(input.accountId, input.userId)) ?? []).map((passkey) => ({ ...passkey }));
  }

  save(input: { accountId: string; userId: string; passkey: StoredPasskey }): void {
    const key = this.#key(input.accountId, input.userId);
    const others = (this.#byUser.get(key) ?? []).filter((passkey) => passkey.id !== input.passkey.id);
    this.#byUser.set(key, [...others, { ...input.passkey }]);
  }

  /** The user of the account who has the credential id (see `PasskeyHooks.findCredentialOwner`); `null` when none. */
  findCredentialOwner(input: { accountId: string; credentialId: string }): string | null {
    const prefix = this.#key(input.accountId, '');
    for (const [key, passkeys] of this.#byUser) {
      if (key.startsWith(prefix) && passkeys.some((passkey) => passkey.id === input.credentialId)) return key.slice(prefix.length);
    }
    return null;
  }

  /** Compare-and-set: the check and the write run in one synchronous step, so no other call comes between them. */
  updateCounter(input: { accountId: string; userId: string; credentialId: string; expectedCounter: number; counter: number }): boolean {
    const passkey = (this.#byUser.get(this.#key(input.accountId, input.userId)) ?? []).find((each) => each.id === input.credentialId);
    if (passkey === undefined || passkey.counter !== input.expectedCounter) return false;
    passkey.counter = input.counter;
    return true;
  }

  remove(input: { accountId: string; userId: string; credentialId: string }): void {
    const key = this.#key(input.accountId, input.userId);
    const kept = (this.#byUser.get(key) ?? []).filter((passkey) => passkey.id !== input.credentialId);
    if (kept.length === 0) this.#byUser.delete(key);
    else this.#byUser.set(key, kept);
  }
}
