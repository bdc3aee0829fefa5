/**
 * `sentinel-idp keys list|rotate|revoke --redis <url>`: operate the shared key ring of the instances that use
 * `keyRotation` with a RedisStore. Acts on the same document as `sentinel.rotateKeys()` / `revokeKey()`, under the
 * same lock, so the running instances converge on the change within their `refreshSeconds`.
 */
import type { SigningAlgorithm } from '../keys/signing-keys.js';
import { listedAlgorithms } from '../keys/keyring/dropped.js';
import { assertOpens, EncryptionKeyNeededError, hasPending, revokeEntry, startRotation } from '../keys/keyring/mutations.js';
import { accountRingName } from '../keys/keyring/per-account.js';
import { describeRing } from '../keys/keyring/describe.js';
import { ENCRYPTION_KEY_COMMAND, parseEncryptionKey } from '../keys/keyring/seal.js';
import { readRing, updateRing } from '../keys/keyring/storage.js';
import type { CLIIO } from './io.js';
import { openRedis, REDIS_URL_ENV, requireRedisPrefix, requireRedisURL, warnPasswordInRedisArgument } from './redis-connection.js';
import { optionalString, type OptionValues, parseArguments, requireAccountId, requireString, UsageError } from './usage.js';

/** Environment variable holding the ring's encryption key (never a command-line argument: it would show in `ps`). */
export const ENCRYPTION_KEY_ENV = 'SENTINEL_KEY_ENCRYPTION_KEY';

const COMMON_OPTIONS = `  --redis <url>     the Redis the instances share (redis:// or rediss://); with a
                    password, set ${REDIS_URL_ENV} instead (arguments show in ps)
  --prefix <p>      the RedisStore prefix of the instances (default sentinel:)
  --ring <name>     keyRotation.name of the instances (default "default")
  --account <id>    the ring of one account (instances with keysPerAccount)
  -h, --help        show this help`;

/** Help text of the `keys` command group. */
export const KEYS_RING_HELP = `Usage: sentinel-idp keys <generate|list|rotate|revoke> [options]

  keys generate [--alg ES256] [--out <file>]
                                     print (or write, mode 600) a new private JWK
  keys list --redis <url>            show the shared key ring (kid, alg, state, times)
  keys rotate --redis <url>          start a rotation: a new key is published now and
                                     signs after the ring's prePublishSeconds
  keys revoke --kid <kid> --redis <url>
                                     emergency: unpublish and refuse the key at once
                                     (instances follow within refreshSeconds)

Options of list, rotate and revoke:
${COMMON_OPTIONS}

rotate and revoke read the ring's encryption key from ${ENCRYPTION_KEY_ENV}
(revoke needs it only when the revoked key was signing and no successor waits).

Example:
  ${ENCRYPTION_KEY_ENV}=... sentinel-idp keys rotate --redis redis://10.0.0.5:6379
`;

const OPTIONS = {
  redis: { type: 'string' },
  prefix: { type: 'string' },
  ring: { type: 'string' },
  account: { type: 'string' },
  kid: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function withRing<T>(
  values: OptionValues,
  command: string,
  io: CLIIO,
  run: (store: import('../stores/store.js').Store, name: string) => Promise<T>,
): Promise<T> {
  const url = requireRedisURL(values, command, io.env);
  const prefix = requireRedisPrefix(values, command);
  const name = optionalString(values, 'ring', command) ?? 'default';
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) throw new UsageError('--ring must be letters, digits, ".", "_" or "-"', command);
  const account = optionalString(values, 'account', command);
  const ringName = account === undefined ? name : accountRingName(name, account);
  warnPasswordInRedisArgument(values, io);
  const { store, close } = await openRedis(url, prefix);
  try {
    return await run(store, ringName);
  } finally {
    await close();
  }
}

function encryptionKey(io: CLIIO, required: boolean): Buffer | undefined {
  const value = io.env[ENCRYPTION_KEY_ENV];
  if (value === undefined || value === '') {
    if (required) throw new Error(`set ${ENCRYPTION_KEY_ENV} to the instances' keyRotation.encryptionKey`);
    return undefined;
  }
  try {
    return parseEncryptionKey(value);
  } catch {
    throw new Error(`${ENCRYPTION_KEY_ENV} must be 32 bytes in base64url without "=" padding, as made by \`${ENCRYPTION_KEY_COMMAND}\``);
  }
}

function parse(argv: readonly string[], command: string, io: CLIIO): OptionValues | null {
  const values = parseArguments(argv, OPTIONS, command);
  if (values.help === true) {
    io.stdout(KEYS_RING_HELP);
    return null;
  }
  if (command !== 'keys revoke' && values.kid !== undefined) throw new UsageError('--kid belongs to keys revoke', command);
  // The instances name an account's ring after a valid account id only: another would name a ring none of them uses.
  if (values.account !== undefined) requireAccountId(values, command);
  return values;
}

/**
 * `keys list`: prints the ring as JSON (public information only).
 * @example await runKeysList(['--redis', 'redis://127.0.0.1:6379'], io);
 */
export async function runKeysList(argv: readonly string[], io: CLIIO): Promise<number> {
  const values = parse(argv, 'keys list', io);
  if (values === null) return 0;
  return withRing(values, 'keys list', io, async (store, name) => {
    const document = await readRing(store, name);
    if (document === null) {
      io.stderr('sentinel-idp: no key ring in this store (no instance with keyRotation has started on it)\n');
      return 1;
    }
    io.stdout(`${JSON.stringify(describeRing(document, Date.now()), null, 2)}\n`);
    return 0;
  });
}

/**
 * `keys rotate`: adds a pre-published key per algorithm of the ring (unless one is already pending), except those the
 * instances dropped from their `algorithms` (keys marked to retire, see keyring/dropped.ts). Exit code 1 when
 * the store holds no ring, or one without a live key (nothing to rotate: the instances replace such a ring).
 * @example await runKeysRotate(['--redis', 'redis://127.0.0.1:6379'], io);
 */
export async function runKeysRotate(argv: readonly string[], io: CLIIO): Promise<number> {
  const values = parse(argv, 'keys rotate', io);
  if (values === null) return 0;
  requireRedisURL(values, 'keys rotate', io.env); // a usage error (exit 2) comes before a missing environment
  const key = encryptionKey(io, true) as Buffer;
  return withRing(values, 'keys rotate', io, async (store, name) => {
    let missing = false;
    let lost = false;
    const written = await updateRing(store, name, (current) => {
      // Dated under the lock, when it is written (published), as the instances do: time spent waiting for the lock
      // must not count as pre-publication.
      const now = Date.now();
      if (current === null) {
        missing = true;
        return null;
      }
      // Checked before anything else: with a rotation already under way there is nothing to write, and a wrong
      // key must still be refused rather than reported as a successful no-op.
      assertOpens(current, key);
      const live = [
        ...new Set(current.keys.filter((entry) => entry.revokedAt === undefined).map((entry) => entry.alg)),
      ] as SigningAlgorithm[];
      // An algorithm the instances dropped (its keys marked to retire) gets no new key, which would never retire.
      const listed = listedAlgorithms(current);
      const algorithms = listed.length > 0 ? listed : live;
      // No live key: no algorithm to rotate (the ring does not record the instances' algorithms, only its keys'), so
      // nothing would be written and no key would sign. The instances take such a ring as lost, as a missing one, and
      // replace it themselves: refused like a missing ring, not reported as a rotation.
      if (algorithms.length === 0) {
        lost = true;
        return null;
      }
      if (algorithms.every((alg) => hasPending(current, alg, now))) return null;
      // The instances' own timings, as their last rotation wrote them: the same pre-publication, the same pruning.
      const { prePublishSeconds, retainSeconds } = current;
      return startRotation(current, algorithms, key, now, { prePublishSeconds, retainSeconds });
    });
    if (missing || written === null || written === undefined) {
      io.stderr('sentinel-idp: no key ring in this store (no instance with keyRotation has started on it)\n');
      return 1;
    }
    if (lost) {
      io.stderr(
        'sentinel-idp: the key ring has no live key (every key in it is revoked): nothing rotated, no key signs.\n' +
          'The instances replace such a ring when they next read it: a running one puts back the keys it holds, with\n' +
          'these revocations applied (a revoked signing key gets a new successor); a starting one creates new keys.\n',
      );
      return 1;
    }
    io.stdout(`${JSON.stringify(describeRing(written, Date.now()), null, 2)}\n`);
    return 0;
  });
}

/**
 * `keys revoke --kid <kid>`: emergency revocation in the shared ring.
 * @example await runKeysRevoke(['--kid', kid, '--redis', 'redis://127.0.0.1:6379'], io);
 */
export async function runKeysRevoke(argv: readonly string[], io: CLIIO): Promise<number> {
  const values = parse(argv, 'keys revoke', io);
  if (values === null) return 0;
  const kid = requireString(values, 'kid', 'keys revoke');
  requireRedisURL(values, 'keys revoke', io.env);
  const key = encryptionKey(io, false);
  return withRing(values, 'keys revoke', io, async (store, name) => {
    let found = false;
    const written = await updateRing(store, name, (current) => {
      let next: ReturnType<typeof revokeEntry>;
      try {
        next = revokeEntry(current, kid, Date.now(), key);
      } catch (error) {
        // Name the variable to set (never its value: it is unset here).
        if (error instanceof EncryptionKeyNeededError) {
          throw new Error(
            `revoking the signing key needs a new one (no successor is pending): set ${ENCRYPTION_KEY_ENV} to the instances' keyRotation.encryptionKey`,
          );
        }
        throw error;
      }
      found = next !== null;
      return next;
    });
    if (!found || written === null || written === undefined) {
      io.stderr('sentinel-idp: no live key with this kid in the ring\n');
      return 1;
    }
    io.stdout(`${JSON.stringify(describeRing(written, Date.now()), null, 2)}\n`);
    return 0;
  });
}
