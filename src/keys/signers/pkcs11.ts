/**
 * `sentinel-idp/pkcs11`: an {@link ExternalSigner} over a PKCS#11 token (an HSM, a smart card, SoftHSM2), so the
 * private key never enters the process. Tested against SoftHSM2 with ES256 and RS256.
 *
 * pkcs11js is an optional peer dependency; only this subpath loads it. Its `C_Sign` with a callback runs on the
 * libuv thread pool, so a slow token does not block the event loop. A PKCS#11 session performs one operation at a
 * time, hence a small pool of sessions, each taken by one signature (`pkcs11-pool.ts`); lost sessions are re-opened
 * (`pkcs11-recovery.ts`).
 */
import { createHash, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import pkcs11js from 'pkcs11js';
import { ConfigurationError } from '../../errors.js';
import { type ExternalSigner, type JWK, type SigningAlgorithm, verifyBytes } from '../signing-keys.js';
import { assertKnownKeys, type KeysOf } from '../../lib/strict-options.js';
import { sessionPool } from './pkcs11-pool.js';
import { PIN_REFUSED, type Pkcs11Lease, tokenLink } from './pkcs11-recovery.js';
import { findSlot, openSession, returnCode, slotFinder } from './pkcs11-slot.js';

/**
 * Where the key is: the module, the token (by slot index or label), the user PIN and the label of the key pair;
 * the JWS algorithm (RFC 7518 §3.1) follows from the key.
 * @example
 * const options: Pkcs11SignerOptions = { library: '/usr/lib/softhsm/libsofthsm2.so', tokenLabel: 'idp', pin, keyLabel: 'signing-2026' };
 */
export interface Pkcs11SignerOptions {
  /** Path of the PKCS#11 module (`.so`) of the HSM vendor. */
  library: string;
  /** Index in the list of slots with a token present; give this or `tokenLabel`. */
  slot?: number;
  /** Label of the token; give this or `slot`. */
  tokenLabel?: string;
  /** The user PIN; read it from a secret store, never from source. Kept to log in again after lost sessions. */
  pin: string;
  /** `CKA_LABEL` of the key pair: one private and one public object carry it, and no other key object. */
  keyLabel: string;
  /** `PS256` to sign an RSA key with PSS; otherwise inferred (P-256 → ES256, P-384 → ES384, RSA → RS256). */
  alg?: SigningAlgorithm;
  /** The published kid; default the RFC 7638 thumbprint of the public key. */
  kid?: string;
  /**
   * Concurrent sessions (signatures in flight): an integer from 1 to 32; default 4, but one fewer than the libuv
   * thread pool's threads (`UV_THREADPOOL_SIZE`, 4 unless set), so 3 with Node's defaults.
   */
  sessions?: number;
  /**
   * Most signatures waiting for a session (an integer from 0 to 10000; default 64): one more is refused at once, so a
   * token that stops answering fails requests fast (500) instead of queueing them without end.
   */
  maxWaiting?: number;
}

// A misspelled `keyLable` or `slots` would fail later with a less precise message, or not at all.
const PKCS11_OPTION_KEYS = {
  library: true,
  slot: true,
  tokenLabel: true,
  pin: true,
  keyLabel: true,
  alg: true,
  kid: true,
  sessions: true,
  maxWaiting: true,
} satisfies KeysOf<Pkcs11SignerOptions>;

/**
 * A PKCS#11 signer: an external signer producing JWS signatures (RFC 7515 §5.1, raw `r||s` for ECDSA per RFC 7518
 * §3.4); `close()` closes its sessions once the signatures in flight have ended.
 * @example process.on('SIGTERM', async () => { server.close(); await signer.close(); });
 */
export interface Pkcs11Signer extends ExternalSigner {
  /**
   * Closes the signer: from now on `sign()` rejects, and so do the signatures still waiting for a session. The
   * signatures already running in the token complete; the returned promise resolves when they have, and the
   * sessions are closed (at once when none is running). Calling it again returns the same promise.
   */
  close(): Promise<void>;
}

/**
 * The default of `sessions`: 4, but fewer than the threads of the libuv pool, where each C_Sign runs. A token that
 * stops answering (a network HSM partitioned away) holds one thread per session until it answers; with every thread
 * held, all else the pool does waits too (the bearer guard's signature checks, file reads, DNS lookups), and the
 * whole service stalls where only its signing should.
 */
function defaultSessions(): number {
  const configured = Number.parseInt(process.env.UV_THREADPOOL_SIZE ?? '', 10);
  const threads = Number.isInteger(configured) && configured > 0 ? configured : 4;
  return Math.max(1, Math.min(4, threads - 1));
}

/** DER-encoded OIDs of the curves (CKA_EC_PARAMS) this signer supports. */
const CURVES: Record<string, { crv: string; alg: SigningAlgorithm; size: number }> = {
  '06082a8648ce3d030107': { crv: 'P-256', alg: 'ES256', size: 32 },
  '06052b81040022': { crv: 'P-384', alg: 'ES384', size: 48 },
};

/** Modules initialised in this process, shared by every signer on the same library (C_Initialize is per process). */
const modules = new Map<string, { module: pkcs11js.PKCS11; users: number; initialised: boolean }>();

function openModule(library: string): pkcs11js.PKCS11 {
  const known = modules.get(library);
  if (known !== undefined) {
    known.users += 1;
    return known.module;
  }
  const module = new pkcs11js.PKCS11();
  try {
    module.load(library);
  } catch {
    throw new ConfigurationError('pkcs11.library', 'is not a loadable PKCS#11 module');
  }
  let initialised = true;
  try {
    module.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
  } catch (error) {
    if ((error as { code?: number }).code !== pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED) {
      module.close(); // not in `modules`: nothing else would ever unload it
      throw new ConfigurationError('pkcs11.library', `the module did not initialise: ${returnCode(error)}`);
    }
    initialised = false; // by the host's own use of the module in this process: its C_Finalize is the host's to call
  }
  modules.set(library, { module, users: 1, initialised });
  return module;
}

function releaseModule(library: string): void {
  const known = modules.get(library);
  if (known === undefined) return;
  known.users -= 1;
  if (known.users > 0) return;
  modules.delete(library);
  try {
    if (known.initialised) known.module.C_Finalize();
  } finally {
    known.module.close();
  }
}

/**
 * The one object of `objectClass` labelled `label`, or null. Two or more are refused: which one a search returns
 * first is the token's choice, so a public object left from a retired key could be published beside another key.
 */
function findObject(module: pkcs11js.PKCS11, session: Buffer, objectClass: number, label: string): Buffer | null {
  module.C_FindObjectsInit(session, [
    { type: pkcs11js.CKA_CLASS, value: objectClass },
    { type: pkcs11js.CKA_LABEL, value: label },
  ]);
  let found: Buffer[];
  try {
    found = module.C_FindObjects(session, 2);
  } finally {
    module.C_FindObjectsFinal(session);
  }
  if (found.length > 1) {
    const kind = objectClass === pkcs11js.CKO_PRIVATE_KEY ? 'private' : 'public';
    throw new ConfigurationError('pkcs11.keyLabel', `more than one ${kind} key on the token has this label; give each key pair its own`);
  }
  return found[0] ?? null;
}

function attribute(module: pkcs11js.PKCS11, session: Buffer, object: Buffer, type: number): Buffer {
  const [found] = module.C_GetAttributeValue(session, object, [{ type }]);
  if (!(found?.value instanceof Buffer)) throw new ConfigurationError('pkcs11.keyLabel', 'the public key lacks an attribute');
  return found.value;
}

/** The EC point of CKA_EC_POINT: a DER OCTET STRING around `04 || x || y` (some modules omit the wrapper). */
function ecPoint(value: Buffer, size: number): Buffer {
  const raw = value.length === 2 * size + 1 ? value : value.subarray(value.length - (2 * size + 1));
  if (raw[0] !== 0x04 || raw.length !== 2 * size + 1)
    throw new ConfigurationError('pkcs11.keyLabel', 'the EC public key is not an uncompressed point');
  return raw;
}

function publicJwkOf(
  module: pkcs11js.PKCS11,
  session: Buffer,
  object: Buffer,
  wanted: SigningAlgorithm | undefined,
): { jwk: JWK; alg: SigningAlgorithm } {
  const keyType = attribute(module, session, object, pkcs11js.CKA_KEY_TYPE).readUInt32LE(0);
  if (keyType === pkcs11js.CKK_EC) {
    const curve = CURVES[attribute(module, session, object, pkcs11js.CKA_EC_PARAMS).toString('hex')];
    if (curve === undefined) throw new ConfigurationError('pkcs11.keyLabel', 'the EC key is not on P-256 or P-384');
    if (wanted !== undefined && wanted !== curve.alg) throw new ConfigurationError('pkcs11.alg', `an ${curve.crv} key signs ${curve.alg}`);
    const point = ecPoint(attribute(module, session, object, pkcs11js.CKA_EC_POINT), curve.size);
    const jwk = {
      kty: 'EC',
      crv: curve.crv,
      x: point.subarray(1, 1 + curve.size).toString('base64url'),
      y: point.subarray(1 + curve.size).toString('base64url'),
    };
    return { jwk, alg: curve.alg };
  }
  if (keyType === pkcs11js.CKK_RSA) {
    const alg = wanted ?? 'RS256';
    if (alg !== 'RS256' && alg !== 'PS256') throw new ConfigurationError('pkcs11.alg', 'an RSA key signs RS256 or PS256');
    const n = attribute(module, session, object, pkcs11js.CKA_MODULUS);
    const e = attribute(module, session, object, pkcs11js.CKA_PUBLIC_EXPONENT);
    return { jwk: { kty: 'RSA', n: n.toString('base64url'), e: e.toString('base64url') }, alg };
  }
  throw new ConfigurationError('pkcs11.keyLabel', 'the key is neither EC nor RSA');
}

/** RFC 7638 thumbprint of a public JWK. */
function thumbprint(jwk: JWK): string {
  const members = jwk.kty === 'EC' ? ['crv', 'kty', 'x', 'y'] : ['e', 'kty', 'n'];
  return createHash('sha256')
    .update(`{${members.map((name) => `"${name}":${JSON.stringify(jwk[name])}`).join(',')}}`)
    .digest('base64url');
}

function mechanismFor(alg: SigningAlgorithm): pkcs11js.Mechanism {
  switch (alg) {
    case 'RS256':
      return { mechanism: pkcs11js.CKM_SHA256_RSA_PKCS };
    case 'PS256':
      return {
        mechanism: pkcs11js.CKM_SHA256_RSA_PKCS_PSS,
        parameter: {
          type: pkcs11js.CK_PARAMS_RSA_PSS,
          hashAlg: pkcs11js.CKM_SHA256,
          mgf: pkcs11js.CKG_MGF1_SHA256,
          saltLen: 32,
        } as pkcs11js.RsaPSS,
      };
    default:
      // Plain CKM_ECDSA over a digest made here: every token supports it, not all support CKM_ECDSA_SHA256/384.
      return { mechanism: pkcs11js.CKM_ECDSA };
  }
}

/** What C_Sign is given: the data for RSA (the mechanism hashes), its digest for plain CKM_ECDSA. */
function signingInput(alg: SigningAlgorithm, data: Uint8Array): Buffer {
  const digest = alg === 'ES256' ? 'sha256' : alg === 'ES384' ? 'sha384' : null;
  return digest === null ? Buffer.from(data) : createHash(digest).update(data).digest();
}

/** The key pair as found on the token: the private object's handle and what was read from the public object. */
interface TokenKeyPair {
  privateKey: Buffer;
  mechanism: pkcs11js.Mechanism;
  alg: SigningAlgorithm;
  publicKey: KeyObject;
  jwk: JWK;
}

/**
 * One probe signature made in the token and verified with the public key read from it. The two objects are paired
 * by label only, so a public object of another key under the same label would publish a key that verifies none of
 * the tokens signed; this refuses the pair at start-up, as a local JWK whose parts do not match is refused.
 */
function assertKeyPair(module: pkcs11js.PKCS11, session: Buffer, pair: TokenKeyPair): void {
  const probe = Buffer.from('sentinel-idp key check');
  let signature: Buffer;
  try {
    module.C_SignInit(session, pair.mechanism, pair.privateKey);
    signature = module.C_Sign(session, signingInput(pair.alg, probe), Buffer.alloc(1024));
  } catch (error) {
    throw new ConfigurationError('pkcs11.keyLabel', `the private key did not sign a probe for ${pair.alg}: ${(error as Error).message}`);
  }
  const key = { kid: 'probe', alg: pair.alg, publicKey: pair.publicKey, publicJWK: pair.jwk };
  if (!verifyBytes(key, probe, signature)) {
    throw new ConfigurationError('pkcs11.keyLabel', 'is not a key pair: its public key does not verify what its private key signs');
  }
}

/**
 * Opens the key pair `keyLabel` on a PKCS#11 token and returns a signer for the `keys` option. The public key is
 * read from the token's public object of the same label and published as a JWK (RFC 7517; kid = RFC 7638
 * thumbprint); the private key is used only inside the token. One probe signature checks that the two objects are
 * a key pair.
 *
 * @example
 * import { pkcs11Signer } from 'sentinel-idp/pkcs11';
 * const signer = pkcs11Signer({ library: '/usr/lib/softhsm/libsofthsm2.so', tokenLabel: 'idp', pin: process.env.HSM_PIN!, keyLabel: 'signing' });
 * const sentinel = createSentinel({ issuer, apps, keys: [{ signer }] });
 * @throws ConfigurationError naming what is wrong (library, token, PIN, key: missing, ambiguous or not a pair).
 */
export function pkcs11Signer(options: Pkcs11SignerOptions): Pkcs11Signer {
  assertKnownKeys(options, PKCS11_OPTION_KEYS, 'pkcs11Signer');
  const count = options.sessions ?? defaultSessions();
  // Not clamped: NaN opened no session and the login then failed as if the PIN were wrong (retries lock the token).
  if (!Number.isInteger(count) || count < 1 || count > 32)
    throw new ConfigurationError('pkcs11.sessions', 'must be an integer from 1 to 32');
  const maxWaiting = options.maxWaiting ?? 64;
  if (!Number.isInteger(maxWaiting) || maxWaiting < 0 || maxWaiting > 10_000)
    throw new ConfigurationError('pkcs11.maxWaiting', 'must be an integer from 0 to 10000');
  const module = openModule(options.library);
  const sessions: Buffer[] = [];
  try {
    const slot = findSlot(module, options);
    for (let index = 0; index < count; index += 1) sessions.push(openSession(module, slot, options));
    const first = sessions[0] as Buffer;
    try {
      loginUser(module, first, options.pin);
    } catch (error) {
      throw loginRefusal(error);
    }
    const privateKey = findObject(module, first, pkcs11js.CKO_PRIVATE_KEY, options.keyLabel);
    const publicObject = findObject(module, first, pkcs11js.CKO_PUBLIC_KEY, options.keyLabel);
    if (privateKey === null || publicObject === null) {
      throw new ConfigurationError('pkcs11.keyLabel', 'no private and public key pair with this label on the token');
    }
    const { jwk, alg } = publicJwkOf(module, first, publicObject, options.alg);
    const publicKey = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
    const kid = options.kid ?? thumbprint(jwk);
    const mechanism = mechanismFor(alg);
    assertKeyPair(module, first, { privateKey, mechanism, alg, publicKey, jwk });
    // After a lost session or login, the same steps as above find the token, log in and check the key again.
    const link = tokenLink(
      {
        module,
        findSlot: slotFinder(module, options, slot),
        login: (session) => loginUser(module, session, options.pin),
        findKey(session) {
          const found = findObject(module, session, pkcs11js.CKO_PRIVATE_KEY, options.keyLabel);
          if (found === null) throw new Error('the private key of this label is no longer on the token');
          assertKeyPair(module, session, { privateKey: found, mechanism, alg, publicKey, jwk });
          return found;
        },
      },
      slot,
      privateKey,
    );
    const leases: Pkcs11Lease[] = sessions.map((handle) => ({ handle, generation: 0 }));
    // Only the sessions of the current generation are closed: an older handle's number may be another session's now.
    const current = (): Buffer[] => leases.filter((lease) => lease.generation === link.generation).map((lease) => lease.handle);
    const pool = sessionPool(leases, () => closeAll(module, current(), options.library), maxWaiting);
    return {
      kid,
      alg,
      publicJwk: { ...jwk, kid, alg, use: 'sig' },
      async sign(data: Uint8Array, signOptions?: { signal?: AbortSignal | undefined }): Promise<Uint8Array> {
        const input = signingInput(alg, data);
        return pool.use(
          (lease) =>
            link.run(lease, async (session, key) => {
              module.C_SignInit(session, mechanism, key);
              return new Promise<Buffer>((resolve, reject) => {
                module.C_Sign(session, input, Buffer.alloc(1024), (error, signature) => (error ? reject(error) : resolve(signature)));
              });
            }),
          signOptions?.signal,
        );
      },
      close: () => pool.close(),
    };
  } catch (error) {
    closeAll(module, sessions, options.library);
    throw error;
  }
}

/**
 * Why the token refused the login. "Wrong PIN" only for the PIN's return codes: said of any other refusal (a token
 * without a user PIN, a device error), it sends the operator trying other PINs, and
 * an HSM locks the PIN after a few wrong ones. The module's return code is named; the PIN never is.
 */
function loginRefusal(error: unknown): ConfigurationError {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'number' && PIN_REFUSED.has(code)) {
    return new ConfigurationError('pkcs11.pin', 'the token refused the login (wrong PIN, or a locked or expired one)');
  }
  return new ConfigurationError('pkcs11.pin', `the token refused the login for another reason than the PIN: ${returnCode(error)}`);
}

/** C_Login as the user; a token already logged in (login is per token, not per session) is fine. */
function loginUser(module: pkcs11js.PKCS11, session: Buffer, pin: string): void {
  try {
    module.C_Login(session, pkcs11js.CKU_USER, pin);
  } catch (error) {
    if ((error as { code?: number }).code !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) throw error;
  }
}

function closeAll(module: pkcs11js.PKCS11, sessions: readonly Buffer[], library: string): void {
  for (const session of sessions) {
    try {
      module.C_CloseSession(session);
    } catch {
      // Closing is best effort; the module is finalised below when no other signer uses it.
    }
  }
  releaseModule(library);
}
