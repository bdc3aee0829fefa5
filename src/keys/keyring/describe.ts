/**
 * The ring as people see it (`sentinel.rotateKeys()`, the console, `sentinel-idp keys list`): each entry's state at
 * a given instant, worked out from the document the same way the signing side does (document.ts).
 */
import type { SigningAlgorithm } from '../signing-keys.js';
import { activeEntry, indexRing, type RingDocument } from './document.js';

/**
 * A ring entry as `sentinel.rotateKeys()` and `sentinel-idp keys list` show it: kid (RFC 7517 §4.5), algorithm,
 * state and times; never a private part.
 * @example const pending = (await sentinel.rotateKeys()).filter((key) => key.state === 'pending');
 */
export interface RingKeyInfo {
  kid: string;
  alg: SigningAlgorithm;
  state: 'pending' | 'active' | 'retired' | 'revoked';
  createdAt: string;
  activatesAt: string;
  revokedAt?: string;
}

/**
 * Describes the entries of a document at `now`.
 * @example for (const key of describeRing(document, Date.now())) console.log(key.kid, key.state);
 */
export function describeRing(document: RingDocument, now: number): RingKeyInfo[] {
  const index = indexRing(document);
  return document.keys.map((entry) => {
    const state =
      entry.revokedAt !== undefined
        ? 'revoked'
        : entry.activatesAt > now
          ? 'pending'
          : activeEntry(index, entry.alg, now)?.kid === entry.kid && !(entry.retiresAt !== undefined && entry.retiresAt <= now)
            ? 'active'
            : 'retired';
    return {
      kid: entry.kid,
      alg: entry.alg,
      state,
      createdAt: new Date(entry.createdAt).toISOString(),
      activatesAt: new Date(entry.activatesAt).toISOString(),
      ...(entry.revokedAt === undefined ? {} : { revokedAt: new Date(entry.revokedAt).toISOString() }),
    };
  });
}
