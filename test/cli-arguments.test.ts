/**
 * The CLI's argument parser: a value that begins with a dash (one RFC 7638 thumbprint kid in 64 does) is read as the
 * value of the option before it, while a missing value followed by another option still reads as missing.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { APPS_DATABASE_COMMANDS, APPS_HELP } from '../src/cli/apps-manage.js';
import { ISSUERS_COMMANDS, ISSUERS_HELP } from '../src/cli/issuers-manage.js';
import { main } from '../src/cli/main.js';
import { parseArguments, type OptionTable } from '../src/cli/usage.js';
import { capturedIO } from './helpers/cli-io.js';

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

describe('CLI usage texts', () => {
  const guide = readFileSync(new URL('../docs/guides/command-line.md', import.meta.url), 'utf8');

  it.each([
    ['apps', APPS_HELP, ['register', ...Object.keys(APPS_DATABASE_COMMANDS)]],
    ['issuers', ISSUERS_HELP, Object.keys(ISSUERS_COMMANDS)],
  ])('"%s --help" and docs/guides/command-line.md name every subcommand it runs', (group, help, subcommands) => {
    const usage = help.split('\n')[0] ?? '';
    for (const sub of subcommands) {
      expect(usage).toMatch(new RegExp(`[ |]${sub}(?=[| ])`));
      expect(guide).toContain(`sentinel-idp ${group} ${sub} `);
    }
  });
});

describe('CLI --account', () => {
  // An unreachable database and Redis: the id must be refused before any connection is tried.
  const DATABASE = ['--database', 'postgres://127.0.0.1:1/none'];
  const REDIS = ['--redis', 'redis://127.0.0.1:1'];

  it.each([
    ['apps', 'register', '--account', 'a/b'],
    ['apps', 'list', ...DATABASE, '--account', 'a/b'],
    ['apps', 'show', ...DATABASE, '--account', '..', '--client', 'c'],
    ['apps', 'delete', ...DATABASE, '--account', 'a?b', '--client', 'c'],
    ['apps', 'rotate-secret', ...DATABASE, '--account', '.', '--client', 'c'],
    ['apps', 'disable', ...DATABASE, '--account', 'a#b', '--client', 'c'],
    ['issuers', 'list', ...DATABASE, '--account', 'a/b'],
    ['issuers', 'remove', ...DATABASE, '--account', '..', '--issuer', 'https://idp.example'],
    ['issuers', 'history', ...DATABASE, '--account', 'a\u0001b', '--issuer', 'https://idp.example'],
    ['sessions', 'list', ...REDIS, '--account', 'a/b', '--user', 'u'],
    ['sessions', 'end', ...REDIS, '--account', '..', '--user', 'u'],
    ['keys', 'list', ...REDIS, '--account', 'a/b'],
    ['keys', 'rotate', ...REDIS, '--account', '..'],
    ['keys', 'revoke', ...REDIS, '--account', 'a?b', '--kid', 'k'],
  ])('%s %s refuses an --account that is no account id, exit code 2', async (...argv) => {
    const io = capturedIO();
    expect(await main(argv, io)).toBe(2);
    const err = io.err;
    expect(err).toMatch(/--account must be 1-256 characters/);
  });
});

describe('CLI store URLs that do not parse', () => {
  const PASSWORD = 'pw-7c1e-not-for-screens';

  it.each([
    ['keys', 'list', '--redis', `redis://u:${PASSWORD}@127.0.0.1:99999`],
    ['sessions', 'list', '--account', 'a', '--user', 'u', '--redis', `redis://u:${PASSWORD}@[bad`],
    ['db', 'migrate', '--database', `postgres://u:${PASSWORD}@127.0.0.1:99999/db`],
    ['apps', 'list', '--account', 'a', '--database', `postgres://u:${PASSWORD}@[bad/db`],
  ])('%s %s refuses it as a wrong command line naming the option, exit code 2, without the URL', async (...argv) => {
    const io = capturedIO();
    expect(await main(argv, io)).toBe(2);
    const err = io.err;
    const option = argv.includes('--redis') ? '--redis' : '--database';
    expect(err).toMatch(new RegExp(`^sentinel-idp: ${option} is not a (valid URL|URL the PostgreSQL driver can read)\\n`));
    expect(err).not.toContain(PASSWORD);
  });
});

describe('CLI apps rotate-secret --overlap', () => {
  it.each([' ', '1e3', '0x10', '1.5', '-1', '+5', '2592001'])(
    'refuses %j as a wrong command line, exit code 2, before any database',
    async (overlap) => {
      const io = capturedIO();
      const argv = ['apps', 'rotate-secret', '--database', 'postgres://127.0.0.1:1/none', '--account', 'a', '--client', 'c'];
      expect(await main([...argv, '--overlap', overlap], io)).toBe(2);
      expect(io.err).toMatch(/--overlap must be a whole number of seconds from 0 to 2592000/);
    },
  );
});
