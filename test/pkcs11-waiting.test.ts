/**
 * The bounded queue of a PKCS#11 signer: behind a token that stopped answering, signatures waiting for a session are
 * refused at once past `maxWaiting` (500 server_error, reported, no token) instead of piling up without end.
 */
import { describe, expect, it } from 'vitest';
import { pkcs11Signer } from '../src/keys/signers/pkcs11.js';
import { sessionPool } from '../src/keys/signers/pkcs11-pool.js';
import { createTestToken, SOFTHSM_REQUIRED, softhsmProblem } from './helpers/softhsm.js';

const problem = softhsmProblem();

describe('PKCS#11 session pool: waiting signatures', () => {
  it('refuses at once past maxWaiting while a hung signature holds the only session', async () => {
    const pool = sessionPool(['only'], () => {}, 1);
    let release = (): void => {};
    const hung = pool.use(() => new Promise<string>((resolve) => (release = () => resolve('first'))));
    const waiting = pool.use(async () => 'second');
    await expect(pool.use(async () => 'third')).rejects.toThrow('too many signatures waiting');
    release();
    expect(await hung).toBe('first');
    expect(await waiting).toBe('second');
    // The queue drained: a new signature waits (or runs) again.
    expect(await pool.use(async () => 'fourth')).toBe('fourth');
    await pool.close();
  });

  it('a waiter whose deadline passed leaves the queue: its place is free and its signature never runs', async () => {
    const pool = sessionPool(['only'], () => {}, 1);
    let release = (): void => {};
    const hung = pool.use(() => new Promise<string>((resolve) => (release = () => resolve('first'))));
    const deadline = new AbortController();
    let abandonedRan = false;
    const abandoned = pool.use(async () => {
      abandonedRan = true;
      return 'abandoned';
    }, deadline.signal);
    deadline.abort();
    await expect(abandoned).rejects.toThrow('abandoned');
    // Its place in the queue is free again for a live request.
    const live = pool.use(async () => 'live');
    release();
    expect(await hung).toBe('first');
    expect(await live).toBe('live');
    expect(abandonedRan).toBe(false);
    await pool.close();
  });
});

describe.skipIf(problem !== null && !SOFTHSM_REQUIRED)('PKCS#11 signer (SoftHSM2): maxWaiting', () => {
  it('refuses a signature past maxWaiting at once, and checks the option', async () => {
    if (problem !== null) throw new Error(`SENTINEL_REQUIRE_SOFTHSM=1 but ${problem}`);
    const token = createTestToken([{ label: 'es256', kind: 'EC-P256' }]);
    const base = { library: token.library, tokenLabel: token.tokenLabel, pin: token.pin, keyLabel: 'es256' };
    try {
      for (const maxWaiting of [-1, 1.5, 10_001, Number.NaN]) {
        expect(() => pkcs11Signer({ ...base, maxWaiting }), String(maxWaiting)).toThrow('invalid option pkcs11.maxWaiting');
      }
      const signer = pkcs11Signer({ ...base, sessions: 1, maxWaiting: 0 });
      // Two at once on one session and no room to wait: the first takes the session (synchronously, in sign()),
      // the second is refused without waiting; the first still signs.
      const first = signer.sign(Buffer.from('first'));
      await expect(signer.sign(Buffer.from('second'))).rejects.toThrow('too many signatures waiting');
      expect((await first).length).toBe(64);
      // Refused, not broken: once the session is back, the next signature runs.
      expect((await signer.sign(Buffer.from('third'))).length).toBe(64);
      await signer.close();
    } finally {
      token.remove();
    }
  });
});
