import { describe, expect, it } from 'vitest';
import { constantTimeEqual, digest, digestsEqual, randomSecret } from '../src/lib/random-secrets.js';

describe('randomSecret', () => {
  it('gives 256-bit base64url secrets that never repeat across many refills of the random pool', () => {
    // 128 secrets per fill: 5,000 draws cross the refill boundary about forty times.
    const seen = new Set<string>();
    for (let i = 0; i < 5_000; i++) {
      const secret = randomSecret();
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
      seen.add(secret);
    }
    expect(seen.size).toBe(5_000);
  });

  it('never hands out the zeros a spent slot is wiped to', () => {
    const zeros = Buffer.alloc(32).toString('base64url');
    for (let i = 0; i < 1_000; i++) expect(randomSecret()).not.toBe(zeros);
  });

  it('spreads its bits evenly (each of the 256 bit positions set in about half the draws)', () => {
    const draws = 2_000;
    const ones = new Array<number>(256).fill(0);
    for (let i = 0; i < draws; i++) {
      const bytes = Buffer.from(randomSecret(), 'base64url');
      for (let bit = 0; bit < 256; bit++) ones[bit] = (ones[bit] ?? 0) + (((bytes[bit >> 3] ?? 0) >> (bit & 7)) & 1);
    }
    // Binomial(2000, 0.5): σ ≈ 22; 6σ bounds keep this test from flaking while catching a stuck or repeated slot.
    for (const count of ones) expect(Math.abs(count - draws / 2)).toBeLessThan(135);
  });
});

describe('digest and constantTimeEqual', () => {
  it('compares by content whatever the lengths', () => {
    expect(digest('a')).toBe(digest('a'));
    expect(constantTimeEqual('secret', 'secret')).toBe(true);
    expect(constantTimeEqual('secret', 'secret-longer')).toBe(false);
  });
});

describe('digestsEqual', () => {
  it('is true for the same digest and false for any other, one differing character or length included', () => {
    const value = digest('refresh-secret');
    expect(digestsEqual(value, digest('refresh-secret'))).toBe(true);
    expect(digestsEqual(value, digest('refresh-secret2'))).toBe(false);
    const lastFlipped = `${value.slice(0, -1)}${value.endsWith('A') ? 'B' : 'A'}`;
    expect(digestsEqual(value, lastFlipped)).toBe(false);
    expect(digestsEqual(value, value.slice(0, -1))).toBe(false);
    expect(digestsEqual(value, '')).toBe(false);
  });

  it('does not take characters beyond Latin-1 for others of the same low byte', () => {
    // Compared as UTF-8: 'Ā' (U+0100) would read as 0x00 in Latin-1 and match a NUL.
    expect(digestsEqual('a\u0100', 'a\u0000')).toBe(false);
    expect(digestsEqual('\u0100', '\u0000\u0000')).toBe(false);
  });
});
