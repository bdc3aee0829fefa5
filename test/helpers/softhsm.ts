/**
 * A private SoftHSM2 token for the PKCS#11 tests: its own config and token directory under tmp, initialised with
 * `softhsm2-util`, with key pairs generated *inside* the token (non-extractable) by a child process.
 *
 * Locally a missing SoftHSM2 skips the suite with the reason printed; with SENTINEL_REQUIRE_SOFTHSM=1 (set by
 * `.ci/run`, which installs softhsm2) the suite fails instead, so CI can never pass by skipping.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CANDIDATES = [
  '/usr/lib/softhsm/libsofthsm2.so',
  '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so',
  '/usr/local/lib/softhsm/libsofthsm2.so',
];

/** The SoftHSM2 PKCS#11 module, when installed. */
export const SOFTHSM_LIBRARY = process.env.SOFTHSM_LIBRARY ?? CANDIDATES.find((path) => existsSync(path));
/** CI sets this: a missing SoftHSM2 is then a failure, not a skip. */
export const SOFTHSM_REQUIRED = process.env.SENTINEL_REQUIRE_SOFTHSM === '1';

/** Why the suite cannot run, or `null`. */
export function softhsmProblem(): string | null {
  if (SOFTHSM_LIBRARY === undefined) return 'no libsofthsm2.so (apt-get install -y softhsm2)';
  try {
    execFileSync('softhsm2-util', ['--version'], { stdio: 'ignore' });
  } catch {
    return 'no softhsm2-util on PATH';
  }
  return null;
}

/** A fresh token; `SOFTHSM2_CONF` of this process points at it (the module reads it at C_Initialize). */
export interface TestToken {
  library: string;
  tokenLabel: string;
  pin: string;
  remove(): void;
}

/** Key pairs to generate: label and kind; `publicLabel` labels the public object otherwise (a mislabelled pair). */
export type KeySpec = { label: string; kind: 'EC-P256' | 'RSA-2048'; publicLabel?: string };

const KEYGEN = `
const pkcs11js = require('pkcs11js');
const [library, tokenLabel, pin, specs] = process.argv.slice(1);
const m = new pkcs11js.PKCS11();
m.load(library);
m.C_Initialize();
const slot = m.C_GetSlotList(true).find((s) => m.C_GetTokenInfo(s).label.trim() === tokenLabel);
const session = m.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
m.C_Login(session, pkcs11js.CKU_USER, pin);
for (const { label, kind, publicLabel } of JSON.parse(specs)) {
  const priv = [{ type: pkcs11js.CKA_TOKEN, value: true }, { type: pkcs11js.CKA_LABEL, value: label },
    { type: pkcs11js.CKA_PRIVATE, value: true }, { type: pkcs11js.CKA_SENSITIVE, value: true },
    { type: pkcs11js.CKA_EXTRACTABLE, value: false }, { type: pkcs11js.CKA_SIGN, value: true }];
  const pub = [{ type: pkcs11js.CKA_TOKEN, value: true }, { type: pkcs11js.CKA_LABEL, value: publicLabel ?? label },
    { type: pkcs11js.CKA_VERIFY, value: true }];
  if (kind === 'EC-P256') {
    m.C_GenerateKeyPair(session, { mechanism: pkcs11js.CKM_EC_KEY_PAIR_GEN },
      [...pub, { type: pkcs11js.CKA_EC_PARAMS, value: Buffer.from('06082a8648ce3d030107', 'hex') }], priv);
  } else {
    m.C_GenerateKeyPair(session, { mechanism: pkcs11js.CKM_RSA_PKCS_KEY_PAIR_GEN },
      [...pub, { type: pkcs11js.CKA_MODULUS_BITS, value: 2048 }, { type: pkcs11js.CKA_PUBLIC_EXPONENT, value: Buffer.from([1, 0, 1]) }], priv);
  }
}
m.C_Logout(session);
m.C_CloseSession(session);
m.C_Finalize();
`;

/**
 * Initialises a token with `keys` generated inside it.
 * @example const token = createTestToken([{ label: 'es', kind: 'EC-P256' }]);
 */
export function createTestToken(keys: readonly KeySpec[]): TestToken {
  const library = SOFTHSM_LIBRARY;
  if (library === undefined) throw new Error('SoftHSM2 is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'sentinel-softhsm-'));
  mkdirSync(join(dir, 'tokens'));
  const conf = join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  process.env.SOFTHSM2_CONF = conf;
  const tokenLabel = 'sentinel-test';
  const pin = '4711-test-pin';
  const env = { ...process.env, SOFTHSM2_CONF: conf };
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', tokenLabel, '--pin', pin, '--so-pin', '0000-so-pin'], {
    env,
    stdio: 'ignore',
  });
  execFileSync(process.execPath, ['-e', KEYGEN, library, tokenLabel, pin, JSON.stringify(keys)], { env, stdio: 'pipe' });
  return { library, tokenLabel, pin, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
