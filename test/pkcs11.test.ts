/**
 * `sentinel-idp/pkcs11` against SoftHSM2: keys generated inside a private token sign ES256 and RS256 access
 * tokens end to end, and jose verifies them with the service's JWKS. Wrong PIN, unknown label and a dead signer
 * are refused clearly.
 */
import { spawnSync } from 'node:child_process';
import { createLocalJWKSet, jwtVerify } from 'jose';
import pkcs11js from 'pkcs11js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError, type Sentinel } from '../src/index.js';
import { type Pkcs11Signer, pkcs11Signer } from '../src/keys/signers/pkcs11.js';
import { call } from './helpers/direct-flow.js';
import { ACCOUNT, appTokenPath, basic, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';
import { createTestToken, SOFTHSM_REQUIRED, softhsmProblem, type TestToken } from './helpers/softhsm.js';

const problem = softhsmProblem();
if (problem !== null && !SOFTHSM_REQUIRED)
  console.warn(`[pkcs11] skipped: ${problem}. Set SENTINEL_REQUIRE_SOFTHSM=1 to make this a failure.`);

/** The sessions a signer opens by default: 4, but fewer than the libuv pool's threads (4 unless UV_THREADPOOL_SIZE). */
const DEFAULT_SESSIONS = Math.max(1, Math.min(4, (Number.parseInt(process.env.UV_THREADPOOL_SIZE ?? '', 10) || 4) - 1));

async function issue(sentinel: Sentinel): Promise<{ status: number; token: string | undefined }> {
  const response = await call(sentinel, {
    method: 'POST',
    path: appTokenPath(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    body: 'grant_type=client_credentials',
  });
  const body = JSON.parse(response.body as string) as { access_token?: string };
  return { status: response.status, token: body.access_token };
}

describe.skipIf(problem !== null && !SOFTHSM_REQUIRED)('PKCS#11 signer (SoftHSM2)', () => {
  let token: TestToken;
  const signers: Pkcs11Signer[] = [];

  beforeAll(() => {
    if (problem !== null) throw new Error(`SENTINEL_REQUIRE_SOFTHSM=1 but ${problem}`);
    token = createTestToken([
      { label: 'es256', kind: 'EC-P256' },
      { label: 'rs256', kind: 'RSA-2048' },
      // Two key pairs under one label.
      { label: 'twice', kind: 'EC-P256' },
      { label: 'twice', kind: 'EC-P256' },
      // A re-generated key whose retired pair left its public object under the label (its private key relabelled).
      { label: 'stale', kind: 'EC-P256' },
      { label: 'stale-retired', kind: 'EC-P256', publicLabel: 'stale' },
      // One private and one public object under 'mixed', of two different key pairs.
      { label: 'mixed-old', kind: 'EC-P256', publicLabel: 'mixed' },
      { label: 'mixed', kind: 'EC-P256', publicLabel: 'mixed-new' },
      // Keys of the recovery tests: one survives its sessions, one is destroyed behind the signer's back.
      { label: 'survivor', kind: 'EC-P256' },
      { label: 'doomed', kind: 'EC-P256' },
    ]);
  });

  afterAll(() => {
    for (const signer of signers) signer.close();
    token?.remove();
  });

  function open(keyLabel: string): Pkcs11Signer {
    const signer = pkcs11Signer({ library: token.library, tokenLabel: token.tokenLabel, pin: token.pin, keyLabel });
    signers.push(signer);
    return signer;
  }

  /**
   * A second pkcs11js instance on the same module, as an operator tool, a failover or a token reboot would act: the
   * module is loaded once per process, so its C_CloseAllSessions and C_Logout reach the signer's sessions too.
   */
  function intruder(): { module: pkcs11js.PKCS11; slot: Buffer } {
    const module = new pkcs11js.PKCS11();
    module.load(token.library);
    try {
      module.C_Initialize();
    } catch (error) {
      if ((error as { code?: number }).code !== pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED) throw error;
    }
    const slot = module.C_GetSlotList(true).find((candidate) => module.C_GetTokenInfo(candidate).label.trim() === token.tokenLabel);
    if (slot === undefined) throw new Error('the test token is not present');
    return { module, slot };
  }

  /** The sessions open in this process (SoftHSM2 reports no count; its session handles are small integers). */
  function openSessions(module: pkcs11js.PKCS11): number {
    let open = 0;
    for (let handle = 1; handle <= 256; handle += 1) {
      const buffer = Buffer.alloc(8);
      buffer.writeBigUInt64LE(BigInt(handle));
      try {
        module.C_GetSessionInfo(buffer);
        open += 1;
      } catch {
        // not a session
      }
    }
    return open;
  }

  async function expectTokens(sentinel: Sentinel, signer: Pkcs11Signer, count: number): Promise<void> {
    const tokens = await Promise.all(Array.from({ length: count }, () => issue(sentinel)));
    for (const { status, token: accessToken } of tokens) {
      expect(status).toBe(200);
      const { protectedHeader } = await jwtVerify(accessToken as string, createLocalJWKSet(sentinel.jwks()), { algorithms: [signer.alg] });
      expect(protectedHeader.kid).toBe(signer.kid);
    }
  }

  it('re-opens its sessions after they die (all closed, or the token logged out) and signs again, reporting nothing', async () => {
    const signer = open('survivor');
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ keys: [{ signer }], onError: (error) => errors.push(error) });
    await expectTokens(sentinel, signer, 4);
    const { module, slot } = intruder();
    for (let round = 0; round < 2; round += 1) {
      module.C_CloseAllSessions(slot); // an HSM reboot or failover: every session handle is gone, and the login
      await expectTokens(sentinel, signer, 12); // more requests than sessions, all on dead handles at first
      expect(openSessions(module)).toBe(DEFAULT_SESSIONS); // one new session per dead one, no more
    }
    const session = module.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
    module.C_Logout(session); // login is per token: this logs out the signer's sessions too
    module.C_CloseSession(session);
    await expectTokens(sentinel, signer, 6);
    expect(errors).toEqual([]);
  });

  it('answers 500 server_error, reported, when re-opening fails too (the key is gone), and without a retry loop', async () => {
    const signer = open('doomed');
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ keys: [{ signer }], onError: (error) => errors.push(error) });
    expect((await issue(sentinel)).status).toBe(200);
    const { module, slot } = intruder();
    const session = module.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
    try {
      module.C_Login(session, pkcs11js.CKU_USER, token.pin);
    } catch (error) {
      if ((error as { code?: number }).code !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) throw error;
    }
    module.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_LABEL, value: 'doomed' }]);
    const objects = module.C_FindObjects(session, 10);
    module.C_FindObjectsFinal(session);
    expect(objects).toHaveLength(2);
    for (const object of objects) module.C_DestroyObject(session, object);
    module.C_CloseAllSessions(slot);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const { status, token: accessToken } = await issue(sentinel);
      expect(status).toBe(500);
      expect(accessToken).toBeUndefined();
    }
    expect(errors).toHaveLength(3);
    for (const error of errors) {
      expect((error as Error).message).toMatch(/^the PKCS#11 session was lost and re-opening it failed: /);
      expect((error as Error).message).not.toContain(token.pin);
    }
    expect(openSessions(module)).toBe(0); // a failed re-open closes the session it opened
  });

  it.each([
    ['es256', 'ES256'],
    ['rs256', 'RS256'],
  ] as const)('%s: tokens signed inside the token verify with jose and with the guard', async (label, alg) => {
    const signer = open(label);
    expect(signer.alg).toBe(alg);
    expect(signer.publicJwk).not.toHaveProperty('d');
    const sentinel = makeSentinel({ keys: [{ signer }] });
    const tokens = await Promise.all(Array.from({ length: 12 }, () => issue(sentinel)));
    for (const { status, token: accessToken } of tokens) {
      expect(status).toBe(200);
      const { protectedHeader, payload } = await jwtVerify(accessToken as string, createLocalJWKSet(sentinel.jwks()), {
        algorithms: [alg],
        typ: 'at+jwt',
      });
      expect(protectedHeader.kid).toBe(signer.kid);
      expect(payload.sub).toBe(CONSUMER_UUID);
      expect((await sentinel.checkBearer(`Bearer ${accessToken}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID })).ok).toBe(true);
    }
    expect(sentinel.jwks().keys).toEqual([expect.objectContaining({ kid: signer.kid, alg, use: 'sig' })]);
  });

  it('selects the token by slot index too', () => {
    const signer = pkcs11Signer({ library: token.library, slot: 0, pin: token.pin, keyLabel: 'es256' });
    signers.push(signer);
    expect(signer.alg).toBe('ES256');
  });

  it('refuses a wrong PIN, an unknown key label, an unknown token and a mismatched alg with a ConfigurationError', () => {
    // Login state is per process and token: with no signer open, the module is finalised and the PIN is checked.
    for (const signer of signers.splice(0)) signer.close();
    const base = { library: token.library, tokenLabel: token.tokenLabel, pin: token.pin };
    expect(() => pkcs11Signer({ ...base, pin: 'wrong-pin', keyLabel: 'es256' })).toThrow(/pkcs11\.pin/);
    expect(() => pkcs11Signer({ ...base, keyLabel: 'missing' })).toThrow(/pkcs11\.keyLabel/);
    expect(() => pkcs11Signer({ ...base, tokenLabel: 'no-such-token', keyLabel: 'es256' })).toThrow(ConfigurationError);
    expect(() => pkcs11Signer({ ...base, keyLabel: 'es256', alg: 'RS256' })).toThrow(/pkcs11\.alg/);
    expect(() => pkcs11Signer({ ...base, library: '/nonexistent/libpkcs11.so', keyLabel: 'es256' })).toThrow(/pkcs11\.library/);
  });

  it('names the code of a login refused for another reason than the PIN, and does not call the PIN wrong', () => {
    // Told "wrong PIN", an operator tries other PINs, and an HSM locks the PIN after a few wrong ones. Here the
    // token was initialised without a user PIN: no PIN can be right, and the message must say why.
    const { module } = intruder();
    const free = module.C_GetSlotList(false).find((slot) => (module.C_GetTokenInfo(slot).flags & pkcs11js.CKF_TOKEN_INITIALIZED) === 0);
    if (free === undefined) throw new Error('SoftHSM2 has no free slot');
    module.C_InitToken(free, '0000-so-pin', 'no-user-pin'.padEnd(32)); // a label is blank-padded (PKCS#11 §3.2)
    const base = { library: token.library, tokenLabel: 'no-user-pin', keyLabel: 'es256' };
    let refused: unknown;
    try {
      pkcs11Signer({ ...base, pin: token.pin });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toMatch(/CKR_USER_PIN_NOT_INITIALIZED/);
    expect((refused as Error).message).not.toMatch(/wrong PIN/);
    expect((refused as Error).message).not.toContain(token.pin);
    expect(() => pkcs11Signer({ ...base, tokenLabel: token.tokenLabel, pin: 'wrong-pin' })).toThrow(/wrong PIN/);
  });

  it('by default opens fewer sessions than the libuv pool has threads, so a token that hangs cannot take them all', () => {
    for (const signer of signers.splice(0)) signer.close();
    const { module } = intruder();
    expect(DEFAULT_SESSIONS).toBeLessThan(Number.parseInt(process.env.UV_THREADPOOL_SIZE ?? '', 10) || 4);
    open('es256');
    expect(openSessions(module)).toBe(DEFAULT_SESSIONS);
  });

  it('a signer chosen by slot index finds its own token again after a lost session, though the index moved', async () => {
    for (const signer of signers.splice(0)) signer.close();
    const { module } = intruder();
    const indexOf = (label: string) => module.C_GetSlotList(true).findIndex((slot) => module.C_GetTokenInfo(slot).label.trim() === label);
    const signer = pkcs11Signer({ library: token.library, slot: indexOf(token.tokenLabel), pin: token.pin, keyLabel: 'survivor' });
    signers.push(signer);
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ keys: [{ signer }], onError: (error) => errors.push(error) });
    await expectTokens(sentinel, signer, 1);
    // Tokens come and go (an HSM partition added, a card inserted): the list of slots with a token is re-ordered.
    const before = indexOf(token.tokenLabel);
    for (let attempt = 0; attempt < 8 && indexOf(token.tokenLabel) === before; attempt += 1) {
      const free = module.C_GetSlotList(false).find((slot) => (module.C_GetTokenInfo(slot).flags & pkcs11js.CKF_TOKEN_INITIALIZED) === 0);
      if (free === undefined) break;
      module.C_InitToken(free, '0000-so-pin', `moved-${attempt}`.padEnd(32));
    }
    expect(indexOf(token.tokenLabel), 'the new tokens left the index as it was').not.toBe(before);
    module.C_CloseAllSessions(module.C_GetSlotList(true)[indexOf(token.tokenLabel)] as Buffer);
    await expectTokens(sentinel, signer, 2);
    expect(errors).toEqual([]);
  });

  it('refuses sessions unless an integer from 1 to 32, before the token is asked for a login', () => {
    // NaN opened no session, and the login then failed as "wrong PIN or locked token" though the PIN was right.
    const base = { library: token.library, tokenLabel: token.tokenLabel, pin: token.pin, keyLabel: 'es256' };
    for (const sessions of [Number.NaN, '4' as unknown as number, -1, 0, 2.5, 33, 1e9, Number.POSITIVE_INFINITY]) {
      expect(() => pkcs11Signer({ ...base, sessions }), String(sessions)).toThrow(
        'sentinel-idp: invalid option pkcs11.sessions: must be an integer from 1 to 32',
      );
    }
    for (const sessions of [1, 32]) {
      const signer = pkcs11Signer({ ...base, sessions });
      signers.push(signer);
      expect(signer.alg).toBe('ES256');
    }
  });

  it('close() while signatures run lets them end, refuses the rest and the later ones, and does not crash', () => {
    // In a child process: closing under a running C_Sign used to finalise the module beneath it (SIGSEGV).
    const child = spawnSync(process.execPath, ['--import', 'tsx', 'test/helpers/pkcs11-close-child.ts'], {
      env: { ...process.env, LIBRARY: token.library, TOKEN_LABEL: token.tokenLabel, PIN: token.pin, KEY_LABEL: 'rs256', ROUNDS: '3' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ status: child.status, signal: child.signal }, child.stderr).toEqual({ status: 0, signal: null });
    const rounds = child.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { inFlight: string[]; later: string; closed: boolean });
    expect(rounds).toHaveLength(3);
    for (const { inFlight, later, closed } of rounds) {
      expect(closed).toBe(true);
      expect(inFlight).toHaveLength(40);
      const signed = inFlight.filter((outcome) => outcome === 'signed');
      expect(signed.length).toBeGreaterThan(0);
      expect(signed.length).toBeLessThanOrEqual(4); // the signatures running in the token; the others had not started
      for (const outcome of inFlight.filter((entry) => entry !== 'signed')) {
        expect(outcome).toBe('rejected: the PKCS#11 signer was closed before this signature started');
      }
      expect(later).toBe('rejected: the PKCS#11 signer is closed');
    }
  });

  it('refuses a key label that more than one private or public object carries, with a ConfigurationError', () => {
    const base = { library: token.library, tokenLabel: token.tokenLabel, pin: token.pin };
    expect(() => pkcs11Signer({ ...base, keyLabel: 'twice' })).toThrow(/pkcs11\.keyLabel: more than one private key/);
    expect(() => pkcs11Signer({ ...base, keyLabel: 'stale' })).toThrow(/pkcs11\.keyLabel: more than one public key/);
  });

  it('refuses a private and a public object under one label that are not a key pair, with a ConfigurationError', () => {
    const base = { library: token.library, tokenLabel: token.tokenLabel, pin: token.pin };
    expect(() => pkcs11Signer({ ...base, keyLabel: 'mixed' })).toThrow(/pkcs11\.keyLabel: is not a key pair/);
  });

  it('a signer that fails yields 500 server_error, reported, and no token', async () => {
    const signer = open('es256');
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ keys: [{ signer }], onError: (error) => errors.push(error) });
    signer.close();
    const { status, token: accessToken } = await issue(sentinel);
    expect(status).toBe(500);
    expect(accessToken).toBeUndefined();
    expect(errors).toHaveLength(1);
  });
});
