/**
 * Signing keys and the JWKS.
 *
 * Keys are imported once at startup as KeyObjects, and `src/keys/jws.ts` signs with `node:crypto` (on the libuv thread pool
 * with `signing: 'threadpool'`, the default; on the main thread with `'sync'`). jose 6 signs through WebCrypto, which
 * costs several times more per token on this hot path; tokens stay standard JWS and verify with jose (tested).
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';
import { ConfigurationError } from '../errors.js';
import { importExternal } from './external-signer-key.js';
import { assertKeyFits, inferAlgorithm } from './key-fit.js';
import type { ExternalSigner, JWK, KeySet, SigningAlgorithm, SigningKey } from './key-types.js';
import { inNextBatch } from './pool-batch.js';
import { DEFAULT_SIGNING_TIMEOUT_SECONDS } from './signing-deadline.js';

export type { ExternalSigner, JWK, KeySet, SigningAlgorithm, SigningKey } from './key-types.js';

/** RFC 7638 thumbprint: SHA-256 over the required public members in lexicographic order. */
function thumbprint(publicJWK: JWK): string {
  const members: Record<string, string[]> = { EC: ['crv', 'kty', 'x', 'y'], OKP: ['crv', 'kty', 'x'], RSA: ['e', 'kty', 'n'] };
  const names = members[publicJWK.kty] ?? [];
  const canonical = `{${names.map((name) => `"${name}":${JSON.stringify(publicJWK[name])}`).join(',')}}`;
  return createHash('sha256').update(canonical).digest('base64url');
}

const HASH: Record<SigningAlgorithm, string | null> = { ES256: 'sha256', ES384: 'sha384', RS256: 'sha256', PS256: 'sha256', EdDSA: null };

/**
 * Imports one private JWK, or an `{ signer }` entry whose private key lives outside the process; such a signer's
 * `sign` fails after `signingTimeout` seconds without an answer.
 * @example const key = importKey(generatePrivateJWK('ES256'), 'keys[0]');
 */
export function importKey(
  jwk: JWK | { signer: ExternalSigner },
  field: string,
  signingTimeout = DEFAULT_SIGNING_TIMEOUT_SECONDS,
): SigningKey {
  if (typeof jwk === 'object' && jwk !== null && 'signer' in jwk)
    return importExternal(jwk.signer as ExternalSigner, field, signingTimeout * 1000, verifyBytesInPool);
  if (typeof jwk !== 'object' || jwk === null || typeof jwk.kty !== 'string') {
    throw new ConfigurationError(field, 'must be a JWK object');
  }
  if (jwk.d === undefined) throw new ConfigurationError(field, 'must be a private JWK (it has no "d")');
  const alg = inferAlgorithm(jwk, field);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
  } catch {
    throw new ConfigurationError(field, 'is not a valid private JWK');
  }
  assertKeyFits(alg, privateKey, field, jwk.kid);
  const publicKey = createPublicKey(privateKey);
  const exported = publicKey.export({ format: 'jwk' }) as JWK;
  const kid = typeof jwk.kid === 'string' && jwk.kid !== '' ? jwk.kid : thumbprint(exported);
  const publicJWK: JWK = { ...exported, kid, alg, use: 'sig' };
  const key: SigningKey = { kid, alg, privateKey, publicKey, publicJWK };
  // The public part is read from the JWK as written (x, y, n, e), not computed from d: a JWK whose parts do not belong
  // together would sign tokens that its own published key never verifies. One probe signature at startup says so.
  const probe = Buffer.from(`sentinel-idp key check ${kid}`);
  if (!verifyBytes(key, probe, signBytes(key, probe))) {
    throw new ConfigurationError(field, 'is not a key pair: its public part does not verify what its private part signs');
  }
  return key;
}

/**
 * A fresh private JWK (RFC 7517) with an RFC 7638 thumbprint as `kid`: for the CLI, demos and the no-keys fallback.
 * @example const sentinel = createSentinel({ issuer, apps, keys: [generatePrivateJWK('EdDSA')] });
 */
export function generatePrivateJWK(alg: SigningAlgorithm = 'ES256'): JWK {
  const { privateKey, publicKey } = generateJWKPairSync(...generation(alg));
  return signingJWKOf(privateKey, publicKey, alg);
}

/**
 * Both halves are exported by the generation job itself, never by a KeyObject it handed back. Node 20 can deadlock on
 * the latter: a garbage collection during a generated key's export may finalize the spent generation job, whose
 * destructor waits for the lock that the export holds, and the process hangs for good. It hung one `config check` of
 * options without `keys` in 30 to 100 runs, and could hang a service whose key ring rotates. Exported inside the job,
 * while the job is alive, no such key exists.
 */
const AS_JWK = { publicKeyEncoding: { format: 'jwk' }, privateKeyEncoding: { format: 'jwk' } } as const;

type JWKPair = { privateKey: JWK; publicKey: JWK };
type Generation = [type: 'ed25519' | 'rsa' | 'ec', options: object];
// @types/node 20 has no overload for JWK encodings; node:crypto has taken them since 15.9.
const generateJWKPairSync = generateKeyPairSync as unknown as (...args: Generation) => JWKPair;
const generateJWKPairInPool = promisify(generateKeyPair) as unknown as (...args: Generation) => Promise<JWKPair>;

/** The key type and options node:crypto generates a key of `alg` with, both halves as JWKs. */
function generation(alg: SigningAlgorithm): Generation {
  if (alg === 'EdDSA') return ['ed25519', AS_JWK];
  if (alg === 'RS256' || alg === 'PS256') return ['rsa', { modulusLength: 2048, ...AS_JWK }];
  return ['ec', { namedCurve: alg === 'ES384' ? 'P-384' : 'P-256', ...AS_JWK }];
}

function signingJWKOf(privateJWK: JWK, publicJWK: JWK, alg: SigningAlgorithm): JWK {
  return { ...privateJWK, kid: thumbprint(publicJWK), alg };
}

/**
 * {@link generatePrivateJWK} on the libuv thread pool: a 2048-bit RSA key takes 100 ms or more to find, which a
 * running service (the key ring rotating) must not spend on its main thread.
 * @example const jwk = await generatePrivateJWKInPool('RS256');
 */
export async function generatePrivateJWKInPool(alg: SigningAlgorithm = 'ES256'): Promise<JWK> {
  const { privateKey, publicKey } = await generateJWKPairInPool(...generation(alg));
  return signingJWKOf(privateKey, publicKey, alg);
}

/**
 * Imports the configured private JWKs. Without any, an ES256 key (access tokens) and an RS256 key (ID tokens: OpenID
 * Connect Discovery §3 makes RS256 mandatory to offer) are generated and `warn` is told that tokens will not survive
 * a restart nor verify on another instance.
 */
export function loadKeys(jwks: readonly (JWK | { signer: ExternalSigner })[] | undefined, warn: (message: string) => void): KeySet {
  if (jwks === undefined || jwks.length === 0) {
    warn(
      'sentinel-idp: no signing keys configured; generated temporary ES256 and RS256 keys. Tokens will not survive a ' +
        'restart or verify on other instances: pass `keys` (generate one with `npx sentinel-idp keys generate`).',
    );
    return keySetOf([importKey(generatePrivateJWK('ES256'), 'keys[0]'), importKey(generatePrivateJWK('RS256'), 'keys[1]')], 'keys');
  }
  return importConfiguredKeys(jwks);
}

/**
 * The key set of the `keys` option as given: each entry imported (and checked) under its index; external signers
 * get `signingTimeout` seconds per signature.
 * @throws ConfigurationError naming the first wrong key.
 */
export function importConfiguredKeys(
  jwks: readonly (JWK | { signer: ExternalSigner })[],
  signingTimeout = DEFAULT_SIGNING_TIMEOUT_SECONDS,
): KeySet {
  return keySetOf(
    jwks.map((jwk, index) => importKey(jwk, `keys[${index}]`, signingTimeout)),
    'keys',
  );
}

/**
 * The key set of `keys`: the first signs, all verify and are published.
 * @throws ConfigurationError on a duplicate kid.
 */
export function keySetOf(keys: readonly SigningKey[], field: string): KeySet {
  const byAlg = new Map<SigningAlgorithm, SigningKey>();
  for (const key of keys) if (!byAlg.has(key.alg)) byAlg.set(key.alg, key);
  const byKid = new Map<string, SigningKey>();
  keys.forEach((key, index) => {
    if (byKid.has(key.kid)) throw new ConfigurationError(`${field}[${index}].kid`, `duplicate kid ${key.kid}`);
    byKid.set(key.kid, key);
  });
  return { signer: keys[0] as SigningKey, byAlg, byKid, jwks: { keys: keys.map((key) => key.publicJWK) } };
}

function privateKeyOf(key: SigningKey): KeyObject {
  if (key.privateKey === undefined) throw new Error('this key signs outside the process (through its external signer)');
  return key.privateKey;
}

/** Signs `data` with `key` in JWS form (raw r||s for ECDSA). */
export function signBytes(key: SigningKey, data: Buffer): Buffer {
  const privateKey = privateKeyOf(key);
  if (key.alg === 'PS256') {
    return sign('sha256', data, { key: privateKey, padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: 32 });
  }
  const hash = HASH[key.alg];
  return key.alg.startsWith('ES') ? sign(hash, data, { key: privateKey, dsaEncoding: 'ieee-p1363' }) : sign(hash, data, privateKey);
}

function signOptions(key: SigningKey): { hash: string | null; options: import('node:crypto').SignKeyObjectInput } {
  const privateKey = privateKeyOf(key);
  if (key.alg === 'PS256') return { hash: 'sha256', options: { key: privateKey, padding: 6, saltLength: 32 } };
  if (key.alg.startsWith('ES')) return { hash: HASH[key.alg], options: { key: privateKey, dsaEncoding: 'ieee-p1363' } };
  return { hash: HASH[key.alg], options: { key: privateKey } };
}

/**
 * Signs `data` on the libuv thread pool (crypto.sign with a callback): the main thread stays free for the next
 * request, so a loaded service uses every core. Same output as {@link signBytes}.
 */
export function signBytesInPool(key: SigningKey, data: Buffer): Promise<Buffer> {
  const { hash, options } = signOptions(key);
  // Dispatched with the other signatures of this loop turn, so the pool's threads are not woken one by one.
  return inNextBatch((resolve, reject) => {
    sign(hash, data, options, (error, signature) => (error === null ? resolve(signature) : reject(error)));
  });
}

function verifyOptions(key: SigningKey): { hash: string | null; options: Parameters<typeof verify>[2] } {
  if (key.alg === 'PS256') return { hash: 'sha256', options: { key: key.publicKey, padding: 6, saltLength: 32 } };
  const hash = HASH[key.alg];
  return key.alg.startsWith('ES') ? { hash, options: { key: key.publicKey, dsaEncoding: 'ieee-p1363' } } : { hash, options: key.publicKey };
}

/** Verifies a JWS signature made by {@link signBytes}, on the main thread. */
export function verifyBytes(key: SigningKey, data: Buffer, signature: Buffer): boolean {
  try {
    const { hash, options } = verifyOptions(key);
    return verify(hash, data, options, signature);
  } catch {
    return false;
  }
}

/**
 * {@link verifyBytes} on the libuv thread pool (`crypto.verify` with a callback): the main thread serves other
 * requests meanwhile, so a second core does the elliptic-curve work. Dispatched in the loop turn's batch, as
 * signatures are (pool-batch.ts): a guard seeing many new tokens at once wakes the pool once, not per token.
 */
export function verifyBytesInPool(key: SigningKey, data: Buffer, signature: Buffer): Promise<boolean> {
  const { hash, options } = verifyOptions(key);
  return verifyInPool(hash, data, options, signature);
}

/**
 * One `crypto.verify` on the thread pool, in the loop turn's batch; `false` for a signature that does not verify
 * or that the key cannot read (never rejects). The guard's and the brand JWT grants' pool checks both go here.
 * @example const valid = await verifyInPool('sha256', input, { key, dsaEncoding: 'ieee-p1363' }, signature);
 */
export function verifyInPool(
  hash: string | null,
  data: Buffer,
  options: Parameters<typeof verify>[2],
  signature: Buffer,
): Promise<boolean> {
  return inNextBatch((resolve) => {
    try {
      verify(hash, data, options, signature, (error, valid) => resolve(error === null && valid));
    } catch {
      resolve(false);
    }
  });
}
