/**
 * `sentinel-idp sessions list|end --redis <url>`: see and end a user's device sessions in the store the instances
 * share, as `sentinel.listSessions()`, `endSession()` and `endUserSessions()` do — for an operator offboarding
 * someone from a shell. Ending works on the store itself: the grants go first, the logout deliveries are queued in
 * the store, and the running instances' delivery loops send them (the CLI sends nothing itself).
 */
import { LogoutQueue } from '../logout/logout-queue.js';
import { endAllUserSessions, endSessionBySid } from '../sessions/end-sessions.js';
import type { SessionContext } from '../sessions/session-index.js';
import { listUserSessions } from '../sessions/session-views.js';
import type { Store } from '../stores/store.js';
import type { CLIIO } from './io.js';
import { openRedis, REDIS_URL_ENV, requireRedisPrefix, requireRedisURL, warnPasswordInRedisArgument } from './redis-connection.js';
import { optionalString, type OptionValues, parseArguments, requireAccountId, requireString, UsageError } from './usage.js';

/** Help text of the `sessions` command group. */
export const SESSIONS_HELP = `Usage: sentinel-idp sessions <list|end> [options]

  sessions list --account <id> --user <id> --redis <url>
                         print the user's device sessions (sid, authTime, clientIds) as JSON
  sessions end --account <id> (--sid <sid> | --user <id>) --redis <url>
                         end one session, or every session of the user ("sign out
                         everywhere"): its grants at once on every instance, and a
                         logout token to each app that takes them, sent by the instances

Options:
  --redis <url>     the Redis the instances share (redis:// or rediss://); with a
                    password, set ${REDIS_URL_ENV} instead (arguments show in ps)
  --prefix <p>      the RedisStore prefix of the instances (default sentinel:)
  --account <id>    the account
  --user <id>       the user
  --sid <sid>       one session (the sid of its ID tokens)
  -h, --help        show this help

Example:
  sentinel-idp sessions end --account 123456 --user u-1 --redis redis://10.0.0.5:6379
`;

const OPTIONS = {
  redis: { type: 'string' },
  prefix: { type: 'string' },
  account: { type: 'string' },
  user: { type: 'string' },
  sid: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse(argv: readonly string[], command: string, io: CLIIO): OptionValues | null {
  const values = parseArguments(argv, OPTIONS, command);
  if (values.help === true) {
    io.stdout(SESSIONS_HELP);
    return null;
  }
  requireAccountId(values, command);
  requireRedisURL(values, command, io.env);
  return values;
}

/** The session functions over the shared store: no registry (every app is queued), no audit hook. */
function storeContext(store: Store): SessionContext {
  return { store, logoutQueue: new LogoutQueue(store), emit: () => {} };
}

async function withStore<T>(values: OptionValues, command: string, io: CLIIO, run: (context: SessionContext) => Promise<T>): Promise<T> {
  const prefix = requireRedisPrefix(values, command);
  const url = requireRedisURL(values, command, io.env);
  warnPasswordInRedisArgument(values, io);
  const { store, close } = await openRedis(url, prefix);
  try {
    return await run(storeContext(store));
  } finally {
    await close();
  }
}

/**
 * `sessions list`: the user's device sessions as JSON.
 * @example await runSessionsList(['--account', '123456', '--user', 'u-1', '--redis', 'redis://127.0.0.1:6379'], io);
 */
export async function runSessionsList(argv: readonly string[], io: CLIIO): Promise<number> {
  const command = 'sessions list';
  const values = parse(argv, command, io);
  if (values === null) return 0;
  if (values.sid !== undefined) throw new UsageError('--sid belongs to sessions end', command);
  const account = requireAccountId(values, command);
  const user = requireString(values, 'user', command);
  return withStore(values, command, io, async (context) => {
    io.stdout(`${JSON.stringify(await listUserSessions(context, account, user), null, 2)}\n`);
    return 0;
  });
}

/**
 * `sessions end`: ends one session (`--sid`) or all of a user's (`--user`); prints `{ "ended": n }`. Exit code 1
 * when `--sid` names no session of the account.
 * @example await runSessionsEnd(['--account', '123456', '--user', 'u-1', '--redis', 'redis://127.0.0.1:6379'], io);
 */
export async function runSessionsEnd(argv: readonly string[], io: CLIIO): Promise<number> {
  const command = 'sessions end';
  const values = parse(argv, command, io);
  if (values === null) return 0;
  const account = requireAccountId(values, command);
  const sid = optionalString(values, 'sid', command);
  const user = optionalString(values, 'user', command);
  if ((sid === undefined) === (user === undefined)) throw new UsageError('give --sid or --user, one of them', command);
  return withStore(values, command, io, async (context) => {
    const ended =
      sid === undefined
        ? await endAllUserSessions(context, account, user as string)
        : (await endSessionBySid(context, account, sid)) === null
          ? 0
          : 1;
    io.stdout(`${JSON.stringify({ ended })}\n`);
    if (sid !== undefined && ended === 0) {
      io.stderr('sentinel-idp: no such session in this account (already ended, or never signed in)\n');
      return 1;
    }
    return 0;
  });
}
