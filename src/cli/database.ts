/**
 * The `--database` option shared by the registry commands: a PostgreSQL URL, opened as a
 * {@link PostgresAppStore} without a lookup cache (a command reads fresh), and closed when the command ends. The
 * URL may hold a password, so it is never printed.
 */
import { userInfo } from 'node:os';
import type { AppChange } from '../apps/app.js';
import { PostgresAppStore } from '../postgres/app-store.js';
import type { CLIIO } from './io.js';
import { carriesPassword, type OptionValues, requireString, UsageError } from './usage.js';

/**
 * Opens the registry at `--database`, runs `work`, and closes it whatever happens. A password written in the URL is
 * on the command line, which other users see in process lists and which shell history keeps: the operator is told
 * (without it being repeated) to leave it out and set `PGPASSWORD` or a `~/.pgpass` entry, which the driver reads.
 */
export async function withDatabase<T>(
  values: OptionValues,
  command: string,
  io: CLIIO,
  work: (store: PostgresAppStore) => Promise<T>,
): Promise<T> {
  const url = requireString(values, 'database', command);
  if (!/^postgres(ql)?:\/\//.test(url)) throw new UsageError('--database must be a postgres:// or postgresql:// URL', command);
  if (carriesPassword(url)) {
    io.stderr(
      'sentinel-idp: warning: the password in --database is visible to other users in process lists and kept in shell history; leave it out of the URL and set PGPASSWORD (or a ~/.pgpass entry) instead\n',
    );
  }
  const store = new PostgresAppStore({ connectionString: url, cache: false, maxConnections: 2 });
  try {
    return await work(store);
  } catch (error) {
    // The driver reads the URL when it first connects, more leniently than the URL parser (spaces, a socket
    // directory as the host), so only its own refusal tells: a wrong command line (exit 2) naming the option, not
    // its parser's bare "Invalid URL" as if the database had failed.
    if ((error as { code?: unknown } | null)?.code === 'ERR_INVALID_URL') {
      throw new UsageError('--database is not a URL the PostgreSQL driver can read', command);
    }
    throw error;
  } finally {
    await store.close();
  }
}

/** Who the change log records for a command run: the operating-system user at the terminal. */
export function cliActor(): AppChange {
  let name = 'unknown';
  try {
    name = userInfo().username;
  } catch {
    // no passwd entry (some containers): still a CLI change
  }
  return { actor: `cli:${name}` };
}

/** The options every registry command takes. */
export const DATABASE_OPTIONS = {
  database: { type: 'string' },
  account: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;
