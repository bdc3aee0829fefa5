/**
 * The user's passkeys as `users.passkeys.list` answers them, read for the ceremonies that use their optional fields
 * (a sign-in's backup-eligible check, a registration's excluded credentials). A host keeps passkeys in its own store,
 * and a nullable column answers `null` for a field a row never had (a passkey stored before `backupEligible` existed,
 * one whose browser reported no transports): that is the field being absent, as the contract means it, and is read
 * so. Any other value that is not the field's type is the host's data error: the request fails (`500`, `onError`
 * names the field) rather than refuse every sign-in of that passkey with a message that blames the user.
 */
import type { PasskeyHooks, StoredPasskey } from './hooks.js';

function broken(field: string): Error {
  return new Error(`sentinel-idp: users.passkeys.list returned a passkey whose ${field}`);
}

function readOne(passkey: StoredPasskey): StoredPasskey {
  const { backupEligible, transports } = passkey as { backupEligible?: unknown; transports?: unknown };
  if (backupEligible !== undefined && backupEligible !== null && typeof backupEligible !== 'boolean') {
    throw broken('backupEligible is neither true, false nor absent');
  }
  const strings = Array.isArray(transports) && transports.every((transport) => typeof transport === 'string');
  if (transports !== undefined && transports !== null && !strings) throw broken('transports is not a list of strings');
  return { ...passkey, backupEligible: backupEligible ?? undefined, transports: transports ?? undefined } as StoredPasskey;
}

/**
 * The user's passkeys in the account, with `null` optional fields read as absent.
 *
 * @throws Error when an optional field is neither absent, `null` nor of its type (the host's data error).
 * @example
 * const stored = (await readPasskeys(hooks, { accountId, userId })).find((passkey) => passkey.id === assertion.id);
 */
export async function readPasskeys(hooks: PasskeyHooks, input: { accountId: string; userId: string }): Promise<StoredPasskey[]> {
  return (await hooks.list(input)).map(readOne);
}
