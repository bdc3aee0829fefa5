/**
 * The sealing of the key ring's private keys at rest (AES-256-GCM, src/keys/keyring/seal.ts): what opens and what
 * must not. A store writer without the encryption key must not get an entry opened, however its tag is cut.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isConfigurationError } from '../src/index.js';
import { open, seal } from '../src/keys/keyring/seal.js';

const KEY = randomBytes(32);

function refusal(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected open() to refuse');
}

describe('key ring sealing', () => {
  it('opens what it sealed, for that kid and that key only', () => {
    const sealed = seal(KEY, 'kid-1', '{"kty":"EC"}');
    expect(open(KEY, 'kid-1', sealed)).toBe('{"kty":"EC"}');
    expect(isConfigurationError(refusal(() => open(KEY, 'kid-2', sealed)))).toBe(true);
    expect(isConfigurationError(refusal(() => open(randomBytes(32), 'kid-1', sealed)))).toBe(true);
  });

  it.each([4, 8, 12, 15])('refuses the genuine tag cut to %d bytes: only a whole 128-bit tag opens', (bytes) => {
    const sealed = seal(KEY, 'kid-1', '{"kty":"EC"}');
    const tag = Buffer.from(sealed.tag, 'base64url').subarray(0, bytes).toString('base64url');
    expect(isConfigurationError(refusal(() => open(KEY, 'kid-1', { ...sealed, tag })))).toBe(true);
  });
});
