/**
 * Which slot holds the token of a PKCS#11 signer (`sentinel-idp/pkcs11`): at start-up by `tokenLabel` or `slot`,
 * and again after its sessions were lost (`pkcs11-recovery.ts`); the sessions opened in it at start-up.
 */
import pkcs11js from 'pkcs11js';
import { ConfigurationError } from '../../errors.js';

/** What names the token among `Pkcs11SignerOptions` (structural, so this file does not import the signer's). */
interface TokenChoice {
  slot?: number | undefined;
  tokenLabel?: string | undefined;
}

/**
 * The slot of the token `options` name (by `tokenLabel`, or by `slot`: an index in the slots with a token present).
 * @throws ConfigurationError when no such token is present.
 * @example const slot = findSlot(module, { tokenLabel: 'idp', ...options });
 */
export function findSlot(module: pkcs11js.PKCS11, options: TokenChoice): Buffer {
  const slots = module.C_GetSlotList(true);
  if (options.tokenLabel !== undefined) {
    const labelled = slots.filter((candidate) => module.C_GetTokenInfo(candidate).label.trim() === options.tokenLabel);
    // Which of two tokens under one label comes first is the module's order, which a token added or re-inserted
    // changes: the PIN would go to the other token (a wrong PIN counted there, maybe locking it), as with `slot`.
    if (labelled.length > 1) {
      throw new ConfigurationError('pkcs11.tokenLabel', 'more than one token present has this label; give each token its own');
    }
    const slot = labelled[0];
    if (slot === undefined) throw new ConfigurationError('pkcs11.tokenLabel', 'no token with this label is present');
    return slot;
  }
  const slot = options.slot === undefined ? undefined : slots[options.slot];
  if (slot === undefined) throw new ConfigurationError('pkcs11.slot', 'give the index of a slot with a token, or tokenLabel');
  return slot;
}

/**
 * The slot of the token found at start-up, found again after a lost session. By `tokenLabel`, the label names it
 * (and a second token under it is refused, as at start-up: findSlot). By `slot`, the index does not: it counts the
 * slots that hold a token now, and a token added or removed (an HSM partition, a card) shifts it, so the PIN would go
 * to another token (a wrong PIN counted there, maybe locking it). The token is then the one with the label and
 * serial number it had at start-up.
 * @example const findAgain = slotFinder(module, options, slot); const slotNow = findAgain();
 */
export function slotFinder(module: pkcs11js.PKCS11, options: TokenChoice, first: Buffer): () => Buffer {
  if (options.tokenLabel !== undefined) return () => findSlot(module, options);
  const { label, serialNumber } = module.C_GetTokenInfo(first);
  return () => {
    const found = module.C_GetSlotList(true).find((candidate) => {
      const info = module.C_GetTokenInfo(candidate);
      return info.label === label && info.serialNumber === serialNumber;
    });
    if (found === undefined) throw new Error('the token of this slot is no longer present');
    return found;
  };
}

/**
 * The module's return code of `error` (`CKR_…`), or its number: never the message of anything else.
 * @example returnCode(error) // 'CKR_TOKEN_NOT_PRESENT'
 */
export function returnCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && /^CKR_[A-Z0-9_]+$/.test(error.message) ? error.message : `code ${String(code)}`;
}

/**
 * C_OpenSession at start-up; a refusal (the token gone, an SO session open) is a ConfigurationError naming the
 * token option and the return code.
 * @example const session = openSession(module, slot, options);
 */
export function openSession(module: pkcs11js.PKCS11, slot: Buffer, options: TokenChoice): Buffer {
  try {
    return module.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
  } catch (error) {
    const field = options.tokenLabel !== undefined ? 'pkcs11.tokenLabel' : 'pkcs11.slot';
    throw new ConfigurationError(field, `the token refused a session: ${returnCode(error)}`);
  }
}
