/**
 * The CLI's argument parser: a value that begins with a dash (one RFC 7638 thumbprint kid in 64 does) is read as the
 * value of the option before it, while a missing value followed by another option still reads as missing.
 */
import { describe, expect, it } from 'vitest';
import { parseArguments, type OptionTable } from '../src/cli/usage.js';

const OPTIONS: OptionTable = {
  kid: { type: 'string' },
  redis: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

describe('CLI arguments', () => {
  it('reads a dashed value after a string option as its value', () => {
    const kid = '-Wc3tJ2xr6yQ1cZb0m9Fh3s7PqYx0eLk2WnA4dGbTq8';
    expect(parseArguments(['--kid', kid, '--redis', 'redis://127.0.0.1:1'], OPTIONS, 'keys revoke')).toMatchObject({ kid });
    expect(parseArguments(['--kid', '--x'], OPTIONS, 'keys revoke')).toMatchObject({ kid: '--x' });
    expect(parseArguments([`--kid=${kid}`], OPTIONS, 'keys revoke')).toMatchObject({ kid });
  });

  it('still reports a missing value when the next token is an option of the command', () => {
    expect(() => parseArguments(['--kid', '--redis', 'redis://127.0.0.1:1'], OPTIONS, 'keys revoke')).toThrow(/option --kid needs a value/);
    expect(() => parseArguments(['--kid', '-h'], OPTIONS, 'keys revoke')).toThrow(/option --kid needs a value/);
    expect(() => parseArguments(['--kid'], OPTIONS, 'keys revoke')).toThrow(/option --kid needs a value/);
  });

  it('does not take a dashed token as the value of a boolean option', () => {
    expect(() => parseArguments(['--help', '-x'], OPTIONS, 'keys revoke')).toThrow(/unknown option/);
  });
});
