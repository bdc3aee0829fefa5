/**
 * The command the guide and the startup message give for making `keyRotation.encryptionKey` makes a key the service
 * accepts. `openssl rand 32 | basenc --base64url`, given before, pads with "=", which is refused: an operator who
 * followed it was sent back to the same command by the message refusing its output.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isConfigurationError } from '../src/index.js';
import { parseEncryptionKey } from '../src/keys/keyring/seal.js';

/** The message refusing `value`, which is expected to throw. */
function refusal(value: string): string {
  try {
    parseEncryptionKey(value);
  } catch (error) {
    if (isConfigurationError(error)) return error.message;
    throw error;
  }
  throw new Error('accepted');
}

describe('keyRotation.encryptionKey: the documented command', () => {
  it('makes a key the service accepts, as the guide and the refusal give it', () => {
    const command = /`([^`]*openssl rand 32[^`]*)`/.exec(refusal('too short'))?.[1];
    expect(command).toBeDefined();
    const guide = readFileSync(new URL('../docs/guides/keys-and-hsm.md', import.meta.url), 'utf8');
    expect(guide).toContain(`\`${command}\``);
    for (let run = 0; run < 4; run += 1) {
      const made = execFileSync('sh', ['-c', command as string], { encoding: 'utf8' }).trim();
      expect(parseEncryptionKey(made)).toHaveLength(32);
    }
  });

  it('says that a padded key is refused for its padding, without repeating it', () => {
    const padded = `${Buffer.alloc(32, 7).toString('base64url')}=`;
    const message = refusal(padded);
    expect(message).toMatch(/without the "=" padding/);
    expect(message).not.toContain(padded.slice(0, 20));
  });
});
