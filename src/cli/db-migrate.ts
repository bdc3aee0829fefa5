/**
 * `sentinel-idp db migrate --database <url>`: creates or upgrades the registry's schema (the same idempotent,
 * lock-guarded migration `PostgresAppStore.migrate()` runs).
 */
import { DATABASE_OPTIONS, withDatabase } from './database.js';
import type { CLIIO } from './io.js';
import { parseArguments } from './usage.js';

const COMMAND = 'db migrate';

/** Help text of `db migrate`. */
export const DB_MIGRATE_HELP = `Usage: sentinel-idp db migrate --database <postgres url> [--json]

Creates or upgrades the application registry's tables in PostgreSQL. Safe to run
again and from several machines at once: versions already applied are skipped.

Options:
  --database <url>  postgres://user@host:5432/dbname; required (the password from
                    PGPASSWORD or ~/.pgpass: arguments show in ps and shell history)
  --json            print {"applied":[…]} instead of a sentence
  -h, --help        show this help
`;

/**
 * Runs `db migrate`; returns the exit code.
 * @example await runDbMigrate(['--database', 'postgres://localhost/idp'], io);
 */
export async function runDbMigrate(argv: readonly string[], io: CLIIO): Promise<number> {
  const { database, json, help } = DATABASE_OPTIONS;
  const values = parseArguments(argv, { database, json, help }, COMMAND);
  if (values.help === true) {
    io.stdout(DB_MIGRATE_HELP);
    return 0;
  }
  const applied = await withDatabase(values, COMMAND, io, (store) => store.migrate());
  if (values.json === true) io.stdout(`${JSON.stringify({ applied })}\n`);
  else
    io.stdout(
      applied.length === 0 ? 'The schema is up to date.\n' : `Applied migration${applied.length === 1 ? '' : 's'} ${applied.join(', ')}.\n`,
    );
  return 0;
}
