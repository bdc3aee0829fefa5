/**
 * `pkcs11Signer({ tokenLabel })` when two tokens present carry that label: which one the module lists first is its
 * own order, which a token added or re-inserted changes, so the PIN could go to the other token (a wrong PIN counted
 * there, maybe locking it) and the key be looked for there. Refused at start-up with a ConfigurationError, as a key
 * label two key objects share is.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../src/index.js';
import { pkcs11Signer } from '../src/keys/signers/pkcs11.js';
import { createTestToken, SOFTHSM_REQUIRED, softhsmProblem, type TestToken } from './helpers/softhsm.js';

const problem = softhsmProblem();
if (problem !== null && !SOFTHSM_REQUIRED)
  console.warn(`[pkcs11] skipped: ${problem}. Set SENTINEL_REQUIRE_SOFTHSM=1 to make this a failure.`);

describe.skipIf(problem !== null && !SOFTHSM_REQUIRED)('PKCS#11 signer: a token label two tokens carry', () => {
  let token: TestToken;

  beforeAll(() => {
    if (problem !== null) throw new Error(`SENTINEL_REQUIRE_SOFTHSM=1 but ${problem}`);
    token = createTestToken([{ label: 'es256', kind: 'EC-P256' }]);
    // A second token under the same label (another PIN, no keys), initialised before the module is loaded here.
    execFileSync(
      'softhsm2-util',
      ['--init-token', '--free', '--label', token.tokenLabel, '--pin', 'another-pin-0000', '--so-pin', '0000-so-pin'],
      { env: process.env, stdio: 'ignore' },
    );
  });

  afterAll(() => token?.remove());

  it('is refused with a ConfigurationError on pkcs11.tokenLabel, before any login', () => {
    let thrown: unknown;
    try {
      pkcs11Signer({ library: token.library, tokenLabel: token.tokenLabel, pin: token.pin, keyLabel: 'es256' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigurationError);
    expect((thrown as ConfigurationError).field).toBe('pkcs11.tokenLabel');
    expect((thrown as Error).message).toMatch(/more than one token/);
    expect((thrown as Error).message).not.toContain(token.pin);
  });
});
