/**
 * The key set derived from a ring document: its private keys opened and imported, the signing key per algorithm,
 * the keys that verify and the JWKS, valid until the next instant written in the document (an activation, a retired
 * key leaving the JWKS).
 */
import { importKey, type JWK, keySetOf, type SigningAlgorithm, type SigningKey } from '../signing-keys.js';
import { activeEntry, indexRing, isPublished, nextChange, prune, type RingDocument, type RingEntry } from './document.js';
import { open } from './seal.js';

/** What the key set of a ring holds at one time. */
export interface Derived {
  signer: SigningKey;
  byAlg: ReadonlyMap<SigningAlgorithm, SigningKey>;
  byKid: ReadonlyMap<string, SigningKey>;
  jwks: { keys: JWK[] };
  /** Recompute at or after this instant. */
  until: number;
}

/** An imported private key and the sealed text it was opened from. */
export interface ImportedKey {
  sealed: string;
  key: SigningKey;
}

/**
 * The private keys of `document` still in use at `now`, opened and imported; those `previous` holds from the same
 * sealed text are reused, so a refresh that finds the same entries decrypts nothing. Throws on a wrong
 * `encryptionKey`.
 */
export function importKeys(
  document: RingDocument,
  previous: ReadonlyMap<string, ImportedKey>,
  encryptionKey: Buffer,
  now: number,
  retainMs: number,
): Map<string, ImportedKey> {
  const imported = new Map<string, ImportedKey>();
  for (const entry of prune(document, now, retainMs)) {
    if (entry.revokedAt !== undefined || entry.sealed === undefined) continue;
    const known = previous.get(entry.kid);
    if (known !== undefined && known.sealed === entry.sealed.data) {
      imported.set(entry.kid, known);
      continue;
    }
    const privateJwk = parsePrivateJwk(open(encryptionKey, entry.kid, entry.sealed), entry.kid);
    imported.set(entry.kid, {
      sealed: entry.sealed.data,
      key: importKey({ ...privateJwk, kid: entry.kid, alg: entry.alg }, `keyRing.${entry.kid}`),
    });
  }
  return imported;
}

/**
 * The opened text of a sealed key as a JWK. JSON.parse's own error quotes the text it could not read, and this text
 * is private key material: the error reported (to `onError`, through the ring's refresh) says only which key.
 */
function parsePrivateJwk(text: string, kid: string): JWK {
  try {
    return JSON.parse(text) as JWK;
  } catch {
    throw new Error(`the sealed private key ${kid} in the key ring does not open to a JWK`);
  }
}

/**
 * The key set of `document` at `now`, signing with the active key of the first of `algorithms` that has one: a key
 * made for an algorithm newly put first is published for the pre-publication delay before it signs, and the
 * algorithm that signed so far keeps signing until then.
 */
export function deriveKeys(
  document: RingDocument,
  imported: ReadonlyMap<string, { key: SigningKey }>,
  now: number,
  algorithms: readonly SigningAlgorithm[],
  retainMs: number,
): Derived {
  const index = indexRing(document);
  const published = new Set<SigningKey>();
  const byAlg = new Map<SigningAlgorithm, SigningKey>();
  for (const entry of document.keys) {
    const key = imported.get(entry.kid)?.key;
    if (key === undefined || !isPublished(index, entry, now, retainMs)) continue;
    // Once per kid: rings written with an algorithm named twice in `algorithms` hold each such key twice, and a
    // second copy (the same kid, the one imported key) refused as a duplicate would keep every instance down.
    published.add(key);
  }
  for (const alg of algorithms) {
    const active: RingEntry | undefined = activeEntry(index, alg, now);
    const key = active === undefined ? undefined : imported.get(active.kid)?.key;
    if (key !== undefined) byAlg.set(alg, key);
  }
  const first = algorithms.map((alg) => byAlg.get(alg)).find((key) => key !== undefined);
  if (first === undefined || published.size === 0) throw new Error('the key ring has no signing key');
  // The signer first: KeySet's contract is "the first signs".
  const ordered = [first, ...[...published].filter((key) => key !== first)];
  const set = keySetOf(ordered, 'keyRing');
  return { signer: first, byAlg, byKid: set.byKid, jwks: set.jwks, until: nextChange(index, now, retainMs) };
}
