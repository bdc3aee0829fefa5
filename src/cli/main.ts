/**
 * The `sentinel-idp` command: its command groups, their help, and the exit code of a run (`bin.ts` runs it as the
 * process). Exit codes: 0 success, 1 the work failed (e.g. the service refused), 2 the command line is wrong.
 */
import { APPS_DATABASE_COMMANDS, APPS_HELP } from './apps-manage.js';
import { ISSUERS_COMMANDS, ISSUERS_HELP } from './issuers-manage.js';
import { runAppsRegister } from './apps-register.js';
import { CONFIG_CHECK_HELP, runConfigCheck } from './config-check.js';
import { DB_MIGRATE_HELP, runDbMigrate } from './db-migrate.js';
import type { CLIIO } from './io.js';
import { runKeysGenerate } from './keys-generate.js';
import { KEYS_RING_HELP, runKeysList, runKeysRevoke, runKeysRotate } from './keys-ring.js';
import { runSessionsEnd, runSessionsList, SESSIONS_HELP } from './sessions.js';
import { runToken } from './token.js';
import { USAGE_EXIT_CODE, UsageError } from './usage.js';

/** Help text of the command itself. */
export const MAIN_HELP = `Usage: sentinel-idp <command> [options]

Commands:
  keys generate    print a new private signing key (JWK) for the keys option
  keys list|rotate|revoke
                   operate the key ring shared by keyRotation instances (--redis)
  apps register    create a client id and secret, and print the hash to store
  apps list|show|rotate-secret|delete|disable|enable
                   manage the apps of a PostgreSQL registry (--database)
  issuers add|list|remove|history
                   the brand identity providers an account trusts (--database)
  sessions list|end
                   see and end a user's device sessions in the shared store (--redis)
  db migrate       create or upgrade the PostgreSQL registry's tables
  config check     check an options file; prints every problem with its path
  token            fetch a consumer-bound access token (client credentials)

Run "sentinel-idp <command> --help" for the options of a command.
`;

type Runner = (argv: readonly string[], io: CLIIO) => Promise<number>;

/** Command groups and their subcommands, each group with one help text for all of them. */
const GROUPS: Record<string, { help: string; commands: Record<string, Runner> }> = {
  keys: {
    help: KEYS_RING_HELP,
    commands: { generate: runKeysGenerate, list: runKeysList, rotate: runKeysRotate, revoke: runKeysRevoke },
  },
  apps: { help: APPS_HELP, commands: { register: runAppsRegister, ...APPS_DATABASE_COMMANDS } },
  issuers: { help: ISSUERS_HELP, commands: ISSUERS_COMMANDS },
  sessions: { help: SESSIONS_HELP, commands: { list: runSessionsList, end: runSessionsEnd } },
  db: { help: DB_MIGRATE_HELP, commands: { migrate: runDbMigrate } },
  config: { help: CONFIG_CHECK_HELP, commands: { check: runConfigCheck } },
};

const isHelp = (argument: string | undefined): boolean => argument === '--help' || argument === '-h' || argument === 'help';

async function dispatch(argv: readonly string[], io: CLIIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.stderr(MAIN_HELP);
    return USAGE_EXIT_CODE;
  }
  if (isHelp(name)) {
    io.stdout(MAIN_HELP);
    return 0;
  }
  if (name === 'token') return runToken(rest, io);
  // Own properties only: `constructor` or `__proto__` must be unknown commands, not prototype members.
  const group = Object.hasOwn(GROUPS, name) ? GROUPS[name] : undefined;
  if (group === undefined) {
    // Echo only what looks like a command word: a secret pasted in the wrong place stays off the screen.
    const shown = /^[a-z][a-z-]{0,30}$/.test(name) ? ` "${name}"` : '';
    throw new UsageError(`unknown command${shown}; expected keys, apps, issuers, sessions, db, config or token`, '');
  }
  const [sub, ...options] = rest;
  if (isHelp(sub)) {
    io.stdout(group.help);
    return 0;
  }
  const run = sub !== undefined && Object.hasOwn(group.commands, sub) ? group.commands[sub] : undefined;
  if (run === undefined) {
    const known = Object.keys(group.commands).join(', ');
    throw new UsageError(
      sub === undefined ? `"${name}" needs a subcommand: ${known}` : `unknown subcommand of "${name}"; expected ${known}`,
      name,
    );
  }
  return run(options, io);
}

/**
 * Runs the CLI with `argv` (without `node` and the script) and returns the exit code. Usage errors are printed with
 * a pointer to `--help`; anything unexpected is printed without a stack and exits 1.
 *
 * @example
 * process.exitCode = await main(process.argv.slice(2), io);
 */
export async function main(argv: readonly string[], io: CLIIO): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (error) {
    if (error instanceof UsageError) {
      const help = error.command === '' ? 'sentinel-idp --help' : `sentinel-idp ${error.command} --help`;
      io.stderr(`sentinel-idp: ${error.message}\nRun "${help}" for usage.\n`);
      return USAGE_EXIT_CODE;
    }
    io.stderr(`sentinel-idp: ${error instanceof Error ? error.message : 'unexpected failure'}\n`);
    return 1;
  }
}
