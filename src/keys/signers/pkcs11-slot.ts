/**
 * Which slot holds the token of a PKCS#11 signer (`sentinel-idp/pkcs11`): at start-up by `tokenLabel` or `slot`,
 * and again after its sessions were lost (`pkcs11-recovery.ts`).
 */
import type pkcs11js from 'pkcs11js';
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
    const slot = slots.find((candidate) => module.C_GetTokenInfo(candidate).label.trim() === options.tokenLabel);
    if (slot === undefined) throw new ConfigurationError('pkcs11.tokenLabel', 'no token with this label is present');
    return slot;
  }
  const slot = options.slot === undefined ? undefined : slots[options.slot];
  if (slot === undefined) throw new ConfigurationError('pkcs11.slot', 'give the index of a slot with a token, or tokenLabel');
  return slot;
}

/**
 * The slot of the token found at start-up, found again after a lost session. By `tokenLabel`, the label names it.
 * By `slot`, the index does not: it counts the slots that hold a token now, and a token added or removed (an HSM
 * partition, a card) shifts it, so the PIN would go to another token (a wrong PIN counted there, maybe locking
 * it). The token is then the one with the label and serial number it had at start-up.
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
