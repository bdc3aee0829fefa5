/**
 * `pkcs11Signer()` startup failures against SoftHSM2: a token refusing the session (an SO read/write session open
 * in the process: CKR_SESSION_READ_WRITE_SO_EXISTS) and a module that does not initialise (SoftHSM2 without its
 * configuration) are ConfigurationErrors naming the return code, never the PIN; the module that did not initialise
 * is closed, not left loaded. A signer on a module the host had initialised itself leaves it initialised when it
 * closes: C_Finalize is the host's to call.
 */
import pkcs11js from 'pkcs11js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../src/index.js';
import { pkcs11Signer } from '../src/keys/signers/pkcs11.js';
import { createTestToken, SOFTHSM_REQUIRED, softhsmProblem, type TestToken } from './helpers/softhsm.js';

const problem = softhsmProblem();

describe.skipIf(problem !== null && !SOFTHSM_REQUIRED)('PKCS#11 signer startup failures (SoftHSM2)', () => {
  let token: TestToken;

  beforeAll(() => {
    if (problem !== null) throw new Error(`SENTINEL_REQUIRE_SOFTHSM=1 but ${problem}`);
    token = createTestToken([{ label: 'es256', kind: 'EC-P256' }]);
  });

  afterAll(() => token?.remove());

  function thrownBy(run: () => unknown): unknown {
    try {
      run();
    } catch (error) {
      return error;
    }
    throw new Error('did not throw');
  }

  it('a session the token refuses is a ConfigurationError naming the return code, not the PIN', () => {
    const module = new pkcs11js.PKCS11();
    module.load(token.library);
    module.C_Initialize();
    const slot = module.C_GetSlotList(true).find((candidate) => module.C_GetTokenInfo(candidate).label.trim() === token.tokenLabel);
    // An SO read/write session in this process: the token then refuses every read-only session (PKCS#11 §5.6).
    const so = module.C_OpenSession(slot as Buffer, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
    module.C_Login(so, pkcs11js.CKU_SO, '0000-so-pin');
    const error = thrownBy(() => pkcs11Signer({ library: token.library, tokenLabel: token.tokenLabel, pin: token.pin, keyLabel: 'es256' }));
    try {
      module.C_Finalize();
    } catch {
      // the signer's failed start already finalised the shared module
    }
    module.close();
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/pkcs11\.tokenLabel.*CKR_SESSION_READ_WRITE_SO_EXISTS/);
    expect((error as Error).message).not.toContain(token.pin);
  });

  it('a module that does not initialise is closed and refused with its return code', () => {
    const conf = process.env.SOFTHSM2_CONF;
    process.env.SOFTHSM2_CONF = '/nonexistent/softhsm2.conf';
    const close = vi.spyOn(pkcs11js.PKCS11.prototype, 'close');
    try {
      const error = thrownBy(() =>
        pkcs11Signer({ library: token.library, tokenLabel: token.tokenLabel, pin: token.pin, keyLabel: 'es256' }),
      );
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).toMatch(/pkcs11\.library.*CKR_/);
      expect(close).toHaveBeenCalledTimes(1);
    } finally {
      close.mockRestore();
      process.env.SOFTHSM2_CONF = conf;
    }
  });

  it('closing a signer does not finalise a module the host initialised (its sessions stay open)', async () => {
    const module = new pkcs11js.PKCS11();
    module.load(token.library);
    module.C_Initialize();
    try {
      const slot = module.C_GetSlotList(true).find((candidate) => module.C_GetTokenInfo(candidate).label.trim() === token.tokenLabel);
      const session = module.C_OpenSession(slot as Buffer, pkcs11js.CKF_SERIAL_SESSION);
      const signer = pkcs11Signer({ library: token.library, tokenLabel: token.tokenLabel, pin: token.pin, keyLabel: 'es256' });
      await signer.close();
      expect(() => module.C_GetSessionInfo(session)).not.toThrow();
      module.C_CloseSession(session);
    } finally {
      try {
        module.C_Finalize();
      } catch {
        // already finalised (the defect this test guards against)
      }
      module.close();
    }
  });
});
