/**
 * How a PKCS#11 signer (`sentinel-idp/pkcs11`) survives the loss of its sessions: an HSM reboot, a network HSM's
 * failover, a token re-inserted or another client's C_CloseAllSessions or C_Logout. Without it every signature kept
 * failing on dead session handles until the process restarted.
 *
 * A signature that fails because its session or the token's login is gone re-opens once and is tried once more:
 * the session is re-opened (on the slot found again by the same option), the user logged in again, the private
 * key looked up again by its label and checked against the published public key. A second failure fails the
 * request as before; there is no retry loop. The PKCS#11 calls of a recovery are synchronous, so two never
 * interleave, and signatures that failed on the same loss share one recovery instead of each logging in again.
 */
import pkcs11js from 'pkcs11js';

/**
 * The PKCS#11 return codes after which a new session and login can succeed where the old one failed. A logout drops
 * the handles of private objects, which a new login renumbers: SoftHSM2 then answers CKR_OBJECT_HANDLE_INVALID, other
 * tokens CKR_USER_NOT_LOGGED_IN or CKR_KEY_HANDLE_INVALID.
 */
const SESSION_LOST = new Set([
  pkcs11js.CKR_SESSION_HANDLE_INVALID,
  pkcs11js.CKR_SESSION_CLOSED,
  pkcs11js.CKR_TOKEN_NOT_PRESENT,
  pkcs11js.CKR_DEVICE_REMOVED,
  pkcs11js.CKR_SLOT_ID_INVALID, // a token re-inserted may come back in another slot: found again by its option
]);
const LOGIN_LOST = new Set([pkcs11js.CKR_USER_NOT_LOGGED_IN, pkcs11js.CKR_KEY_HANDLE_INVALID, pkcs11js.CKR_OBJECT_HANDLE_INVALID]);
/** A login refused for the PIN is never tried again: an HSM locks the PIN after a few wrong attempts. */
export const PIN_REFUSED = new Set([
  pkcs11js.CKR_PIN_INCORRECT,
  pkcs11js.CKR_PIN_LOCKED,
  pkcs11js.CKR_PIN_EXPIRED,
  pkcs11js.CKR_PIN_LEN_RANGE,
]);

/**
 * One session of the pool. `generation` is the token link's generation it was opened in: once the sessions are
 * lost, the handles of older generations are never used again, nor closed, as the module may have handed the same
 * number to a new session (ours or another signer's).
 */
export interface Pkcs11Lease {
  handle: Buffer;
  generation: number;
}

/** What a recovery needs from the signer; the PIN stays in the signer's options, behind `login`. */
export interface TokenAccess {
  module: pkcs11js.PKCS11;
  /** The slot of the token, found again by `slot` or `tokenLabel`. */
  findSlot(): Buffer;
  /** C_Login as the user on `session`; a token already logged in is fine; throws the module's error otherwise. */
  login(session: Buffer): void;
  /** The private key handle by its label, checked against the published public key; throws when gone. */
  findKey(session: Buffer): Buffer;
}

/** A token link: the current private key handle and the generation of the sessions, re-established on loss. */
export interface TokenLink {
  readonly generation: number;
  /** Runs `operation` on the lease, re-opening once after a lost session or login (see the module comment). */
  run<T>(lease: Pkcs11Lease, operation: (session: Buffer, privateKey: Buffer) => Promise<T>): Promise<T>;
}

function codeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/**
 * Links a signer's sessions to its token, starting from the slot and the private key found at start-up.
 * @example const link = tokenLink(access, slot, privateKey); await link.run(lease, (session, key) => sign(session, key));
 */
export function tokenLink(access: TokenAccess, firstSlot: Buffer, firstKey: Buffer): TokenLink {
  const { module } = access;
  let slot = firstSlot;
  let privateKey = firstKey;
  let generation = 0;
  // Bumped by every recovery that succeeded: a signature that failed before it retries without one of its own.
  let epoch = 0;
  let pinRefused: Error | null = null;

  const reopen = (lease: Pkcs11Lease): void => {
    lease.handle = module.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
    lease.generation = generation;
  };

  const login = (session: Buffer): Buffer => {
    try {
      access.login(session);
    } catch (error) {
      if (PIN_REFUSED.has(codeOf(error) ?? 0)) pinRefused = new Error('the token refused the PIN; restart with the right one');
      throw error;
    }
    return access.findKey(session);
  };

  // Nothing is committed unless it all succeeds, so the next signature that fails tries again (one try each).
  const recover = (lease: Pkcs11Lease, sessionLost: boolean): void => {
    if (pinRefused !== null) throw pinRefused;
    if (!sessionLost) {
      privateKey = login(lease.handle);
      epoch += 1;
      return;
    }
    const newSlot = access.findSlot();
    const session = module.C_OpenSession(newSlot, pkcs11js.CKF_SERIAL_SESSION);
    try {
      privateKey = login(session);
    } catch (error) {
      try {
        module.C_CloseSession(session); // ours and alive: no other session can hold this number yet
      } catch {
        // Best effort: the session dies with the token anyway.
      }
      throw error;
    }
    slot = newSlot;
    generation += 1; // every session opened before is gone with this one (a reboot, a failover, a C_CloseAllSessions)
    epoch += 1;
    lease.handle = session;
    lease.generation = generation;
  };

  return {
    get generation() {
      return generation;
    },
    async run<T>(lease: Pkcs11Lease, operation: (session: Buffer, privateKey: Buffer) => Promise<T>): Promise<T> {
      const before = epoch;
      try {
        if (lease.generation !== generation) reopen(lease);
        return await operation(lease.handle, privateKey);
      } catch (error) {
        const code = codeOf(error) ?? 0;
        if (!SESSION_LOST.has(code) && !LOGIN_LOST.has(code)) throw error;
        try {
          if (epoch === before) recover(lease, SESSION_LOST.has(code));
          else if (lease.generation !== generation) reopen(lease);
        } catch (cause) {
          throw new Error(`the PKCS#11 session was lost and re-opening it failed: ${(cause as Error).message}`, { cause });
        }
      }
      return operation(lease.handle, privateKey);
    },
  };
}
