/**
 * The signature check of a brand JWT with node:crypto against the issuer's registered key set. Every exchange and
 * JWT bearer request verifies one, so this is the grants' hot path.
 *
 * Where it runs depends on what the check costs. An RSA verification (RS*, PS*: a public exponent of 65537) costs
 * about 22 µs, less than handing it to libuv's thread pool and back, so it runs here, on the main thread. An ECDSA or
 * EdDSA verification costs three times that and more (ES256 about 75 µs), so with `verification: 'threadpool'` (the
 * default) it runs on the pool, batched like the service's signatures, and the event loop keeps answering meanwhile:
 * at saturation on two cores an ES256 brand JWT exchange verified on the main thread answered 0.95× the requests of
 * a hand-written jose endpoint, whose WebCrypto verification runs on the pool (bench/RESULTS.md). jose's own
 * WebCrypto route cost about as much as the rest of the request together, so neither path uses it.
 *
 * Keys are chosen as jose chooses them from a local set (the header's `kid` when it names one, the key's own `alg`,
 * `use: "sig"`, `key_ops` with `verify`), and the key type must fit the algorithm exactly: no algorithm confusion.
 */
import { constants, createPublicKey, type JsonWebKey, type KeyObject, type VerifyKeyObjectInput, verify } from 'node:crypto';
import { publicKeyProblem } from '../keys/jwk-public.js';
import { verifyInPool } from '../keys/signing-keys.js';

interface Scheme {
  hash: string | null;
  /** RSASSA-PSS salt length (the hash's size, RFC 7518 §3.5); absent for PKCS#1 v1.5, ECDSA and EdDSA. */
  pssSalt?: number;
  /** Whether the check costs more than a hand-off to the thread pool (ECDSA, EdDSA), so it goes there. */
  costly?: boolean;
  fits(key: KeyObject): boolean;
}

const curve = (name: string) => (key: KeyObject) => key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === name;
const rsa = (key: KeyObject) => key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048;
const rsaPss = (key: KeyObject) =>
  (key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'rsa-pss') && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048;

/** Every algorithm of the asymmetric allow-list, and how it verifies. */
const SCHEMES: Record<string, Scheme> = {
  ES256: { hash: 'sha256', costly: true, fits: curve('prime256v1') },
  ES384: { hash: 'sha384', costly: true, fits: curve('secp384r1') },
  ES512: { hash: 'sha512', costly: true, fits: curve('secp521r1') },
  EdDSA: { hash: null, costly: true, fits: (key) => key.asymmetricKeyType === 'ed25519' || key.asymmetricKeyType === 'ed448' },
  Ed25519: { hash: null, costly: true, fits: (key) => key.asymmetricKeyType === 'ed25519' },
  RS256: { hash: 'sha256', fits: rsa },
  RS384: { hash: 'sha384', fits: rsa },
  RS512: { hash: 'sha512', fits: rsa },
  PS256: { hash: 'sha256', pssSalt: 32, fits: rsaPss },
  PS384: { hash: 'sha384', pssSalt: 48, fits: rsaPss },
  PS512: { hash: 'sha512', pssSalt: 64, fits: rsaPss },
};

interface UsableKey {
  jwk: Record<string, unknown>;
  key: KeyObject;
}

// Keys imported once per key-set object (the configured set, or the fetcher's cached copy until it refreshes).
const imported = new WeakMap<object, UsableKey[]>();

function usableKeys(set: { keys?: unknown }): UsableKey[] {
  let keys = imported.get(set);
  if (keys !== undefined) return keys;
  keys = [];
  for (const entry of Array.isArray(set.keys) ? set.keys : []) {
    if (publicKeyProblem(entry) !== null) continue;
    const jwk = entry as Record<string, unknown>;
    if (jwk.use !== undefined && jwk.use !== 'sig') continue;
    if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) continue;
    try {
      keys.push({ jwk, key: createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }) });
    } catch {
      // a key this runtime cannot import signs nothing here
    }
  }
  imported.set(set, keys);
  return keys;
}

/** What the check found: a key verified it, no key of the set could have signed it, or the candidates refuse it. */
export type BrandSignature = 'verified' | 'no-matching-key' | 'bad-signature' | 'algorithm-not-allowed';

/** A JWS's signing input (the ASCII of `header.payload`) and its decoded signature, cut out once by the caller. */
export interface SignedBytes {
  input: Buffer;
  signature: Buffer;
}

/**
 * Checks `signed` (its header already decoded as `header`) with the keys of `set`. Never throws nor rejects. With
 * `mode` `'threadpool'` an ECDSA or EdDSA check runs on libuv's thread pool and the answer is a promise; every other
 * check answers at once.
 * @example if ((await checkBrandSignature(signed, header, issuerKeys, 'threadpool')) !== 'verified') throw refuse('not signed by its issuer');
 */
export function checkBrandSignature(
  signed: SignedBytes,
  header: { alg?: unknown; kid?: unknown },
  set: { keys?: unknown },
  mode: 'threadpool' | 'sync' = 'sync',
): BrandSignature | Promise<BrandSignature> {
  const alg = header.alg;
  const scheme = typeof alg === 'string' && Object.hasOwn(SCHEMES, alg) ? SCHEMES[alg] : undefined;
  if (scheme === undefined) return 'algorithm-not-allowed';
  const candidates = usableKeys(set).filter(
    ({ jwk, key }) =>
      (header.kid === undefined || jwk.kid === header.kid) && (jwk.alg === undefined || jwk.alg === alg) && scheme.fits(key),
  );
  if (candidates.length === 0) return 'no-matching-key';
  const checks = candidates.map(
    ({ key }): VerifyKeyObjectInput =>
      scheme.pssSalt !== undefined
        ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: scheme.pssSalt }
        : { key, dsaEncoding: 'ieee-p1363' },
  );
  if (mode === 'threadpool' && scheme.costly === true) return verifiedInPool(scheme.hash, signed, checks);
  for (const options of checks) {
    try {
      if (verify(scheme.hash, signed.input, options, signed.signature)) return 'verified';
    } catch {
      // a malformed signature for this key: try the next candidate
    }
  }
  return 'bad-signature';
}

/** The candidates tried one after another on the thread pool, in the service's next batch of pool work. */
async function verifiedInPool(hash: string | null, signed: SignedBytes, checks: VerifyKeyObjectInput[]): Promise<BrandSignature> {
  for (const options of checks) {
    if (await verifyInPool(hash, signed.input, options, signed.signature)) return 'verified';
  }
  return 'bad-signature';
}
