/**
 * Where passkeys live: the host's user store, through `users.passkeys`. The service keeps no credential of its
 * own; it asks for a user's passkeys, hands over new ones to save, and moves each signature counter by
 * compare-and-set.
 */

/**
 * One passkey (a WebAuthn public-key credential; the key is a COSE key, RFC 9052 §7) of one user, as the host stores it. Nothing here is secret:
 * the public key verifies signatures, it cannot make them.
 *
 * @example
 * const passkey: StoredPasskey = { id: 'hPf3…', publicKey: 'pQECAy…', counter: 0, transports: ['internal'], createdAt: Date.now() };
 */
export interface StoredPasskey {
  /** The credential id, base64url. */
  id: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  /** The authenticator's signature counter at the last use (0 for authenticators that keep none). */
  counter: number;
  /** The transports the browser reported (WebAuthn §5.8.4); absent or `null` when it reported none. */
  transports?: string[] | undefined;
  /**
   * Whether the authenticator said, when the passkey was made, that it may be backed up and synced (the BE flag,
   * WebAuthn §6.1.3): set on every passkey the service adds, kept by the host as given. A sign-in whose assertion
   * says otherwise is refused (WebAuthn §7.2 step 19: the flag never changes for a credential), since the token's
   * `amr` (`hwk` or `swk`) is read from it. Absent (or `null`, as a nullable column answers) on passkeys stored
   * before it existed: those are taken at the assertion's word. Any other value fails the sign-in with a 500.
   */
  backupEligible?: boolean | undefined;
  /** Milliseconds since the epoch. */
  createdAt: number;
}

/**
 * The `users.passkeys` hooks (credentials with COSE public keys, RFC 9052 §7). Every call names the account: a passkey of account A is never found in account B.
 *
 * @example
 * const users = { authenticate, passkeys: new MemoryPasskeys() };
 */
export interface PasskeyHooks {
  /**
   * The user's passkeys in the account (empty when none). `userId` must match exactly, as the service wrote it: a
   * passkey signs its user in under the `userId` its sign-in named (the credential's user handle), so a lookup that
   * ignores case (a `_ci` column) would let `ALICE` be signed in with alice's passkey, a second `sub` for one person.
   */
  list(input: { accountId: string; userId: string }): readonly StoredPasskey[] | Promise<readonly StoredPasskey[]>;
  /**
   * Stores a newly registered passkey. The service checks first that no user of the account has its credential id
   * (with `findCredentialOwner`), and holds a claim of the id in its Store from that check to the end of `save`, so
   * two registrations of one id at once through the service never both save. A store that can should also refuse a
   * duplicate id (a unique index), against writes that do not come through the service: a throw is a 500 and the
   * passkey is not added.
   */
  save(input: { accountId: string; userId: string; passkey: StoredPasskey }): void | Promise<void>;
  /**
   * The user of the account who has a passkey with this credential id, or `null` when none has. A new passkey with
   * an id some user already has is refused (WebAuthn Level 2 §7.1 step 26): the same user's would replace the
   * stored key and reset its counter, another user's would give two users one credential. Optional: without it only
   * the registering user's own passkeys (from `list`) are checked.
   *
   * @example
   * findCredentialOwner: async ({ accountId, credentialId }) =>
   *   (await db.query('SELECT user_id FROM passkeys WHERE account_id = $1 AND id = $2', [accountId, credentialId])).rows[0]?.user_id ?? null
   */
  findCredentialOwner?(input: { accountId: string; credentialId: string }): string | null | Promise<string | null>;
  /**
   * Records the counter of a verified assertion as a compare-and-set (a later lower counter means a cloned
   * authenticator): writes `counter` only if the stored counter is still `expectedCounter`, the value `list` gave,
   * and answers whether it did. Of two assertions that read the same counter at most one may move it, so a cloned
   * authenticator replaying one value signs in once and a slower write never moves the counter back; `false` refuses
   * the sign-in like a replayed counter. Anything but `true` or `false` fails the sign-in with a 500. An
   * authenticator that keeps no counter reports 0 every time: 0 over 0 is a write that applies.
   *
   * @example
   * updateCounter: async ({ accountId, userId, credentialId, expectedCounter, counter }) =>
   *   (await db.query('UPDATE passkeys SET counter = $5 WHERE account_id = $1 AND user_id = $2 AND id = $3 AND counter = $4',
   *     [accountId, userId, credentialId, expectedCounter, counter])).rowCount === 1
   */
  updateCounter(input: {
    accountId: string;
    userId: string;
    credentialId: string;
    expectedCounter: number;
    counter: number;
  }): boolean | Promise<boolean>;
  /**
   * Deletes one of the user's passkeys (the account page's "Remove"). Optional: without it the account page lists
   * passkeys but offers no removal. Removing a credential the user does not have must change nothing.
   *
   * @example
   * remove: ({ accountId, userId, credentialId }) => db.passkeys.delete({ accountId, userId, id: credentialId })
   */
  remove?(input: { accountId: string; userId: string; credentialId: string }): void | Promise<void>;
}
