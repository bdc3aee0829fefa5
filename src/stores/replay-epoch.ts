/**
 * Single use that survives the store losing its memory. A replay marker (`assertion-jti:`, `brand-jti:`,
 * `dpop-jti:`, `dpop-push-jti:`) is negative state: a store that restarted empty (Redis without persistence) or
 * was flushed no longer has it, and a captured assertion or proof would pass a second time within its lifetime.
 * Grants need no such care (a lost grant refuses its tokens); markers do, and so do the revocation markers of a
 * consumer's delegated token (`revoked-jti:`), which no grant stands behind (token/delegated-revocations.ts).
 *
 * So the store keeps one more record, the *replay epoch* (`replay-epoch:current`), and every instance remembers the
 * one it last saw. An instance that finds it missing or replaced knows the markers beside it were lost, and
 * publishes an epoch that says so, with the time it noticed. From then on a single-use credential passes only when
 * it was certainly made after that time (each verifier knows from which claims: {@link spendOnce}'s `madeAfter`);
 * anything older could have been spent before the loss, and is refused. The refusal ends by itself: credentials made
 * before the loss expire within their (bounded) lifetime, and new ones pass.
 *
 * The epoch is read *after* the marker is counted: a loss between the two is then seen, whereas read first, a loss
 * right after the read would let the marker count 1 on the emptied store unnoticed.
 *
 * What it cannot see: a loss no running instance witnessed (every instance restarted along with the store; a
 * MemoryStore's process restart), and a Redis Cluster node that came back empty while the node holding the epoch
 * kept it (flush every node then, as docs/guides/deployment.md says; the flush is seen).
 */
import { randomBytes } from 'node:crypto';
import { digest, shortDigest } from '../lib/random-secrets.js';
import { countAnswered } from './counter-slot.js';
import type { Store } from './store.js';

/** The epoch's key; its prefix is security state in MemoryStore (never evicted). */
export const REPLAY_EPOCH_KEY = 'replay-epoch:current';
// Store.swap needs a lifetime; the epoch should outlive every deployment (as the key ring's ten years).
const EPOCH_TTL_MS = 10 * 365 * 24 * 3600 * 1000;

/**
 * Per service (keyed by an object that lives as long as it, the resolved configuration): the epoch value it last
 * saw, the witness of a loss.
 */
const held = new WeakMap<object, string>();

interface Epoch {
  /** Whether a loss of markers is known to have happened before `since`. */
  readonly lost: boolean;
  /** When the epoch was published, milliseconds since the epoch of time. */
  readonly since: number;
  readonly id: string;
}

function format(epoch: Epoch): string {
  return `${epoch.lost ? 'lost' : 'kept'}.${epoch.id}.${epoch.since}`;
}

/** The epoch value last parsed, and what it said: the store answers the same value to nearly every read. */
let lastParsed: { value: string; epoch: Epoch } | undefined;

function parse(value: string): Epoch {
  if (lastParsed?.value === value) return lastParsed.epoch;
  const match = /^(lost|kept)\.([A-Za-z0-9_-]{1,64})\.(\d{1,16})$/.exec(value);
  // Not what an instance wrote: whether markers were lost cannot be told, so nothing single-use passes.
  if (match === null) throw new Error(`sentinel-idp: the store's ${REPLAY_EPOCH_KEY} is not a replay epoch; delete it`);
  const epoch: Epoch = { lost: match[1] === 'lost', id: match[2] as string, since: Number(match[3]) };
  lastParsed = { value, epoch };
  return epoch;
}

/** Publishes `value` where none is; the value stored afterwards (the winner's, when another instance was first). */
async function publish(store: Pick<Store, 'get' | 'swap'>, value: string): Promise<string> {
  if (await store.swap([{ key: REPLAY_EPOCH_KEY, expect: null, value, ttlMs: EPOCH_TTL_MS }])) return value;
  const winner = await store.get(REPLAY_EPOCH_KEY);
  if (winner === null) throw new Error(`sentinel-idp: the store's ${REPLAY_EPOCH_KEY} could be neither created nor read`);
  return winner;
}

/**
 * Since when (milliseconds since the epoch) the store's replay markers are known to be complete: `0` when no loss
 * is known, else the time the loss was noticed. Rejects when the store fails or holds something else there.
 *
 * @example const since = await markersKeptSince(context.store, context.config);
 */
export async function markersKeptSince(store: Pick<Store, 'get' | 'swap'>, owner: object): Promise<number> {
  const mine = held.get(owner);
  let stored = await store.get(REPLAY_EPOCH_KEY);
  if (stored === null) {
    // Never written, or lost. Only an instance that saw one before knows it was lost; one starting afresh on an
    // empty store cannot tell it from a new store.
    const fresh: Epoch = { lost: mine !== undefined, since: Date.now(), id: randomBytes(9).toString('base64url') };
    stored = await publish(store, format(fresh));
  }
  let epoch = parse(stored);
  if (mine !== undefined && stored !== mine && !epoch.lost) {
    // Replaced by an instance that started on the emptied store and knew of no loss: this one does. The markers
    // spent since that epoch began are there, those before it are not.
    const marked = format({ ...epoch, lost: true });
    if (!(await store.swap([{ key: REPLAY_EPOCH_KEY, expect: stored, value: marked, ttlMs: EPOCH_TTL_MS }]))) {
      const now = await store.get(REPLAY_EPOCH_KEY);
      // Changed again meanwhile: only an epoch that knows of the loss will do; anything else fails closed.
      if (now === null || !parse(now).lost) throw new Error(`sentinel-idp: the store's ${REPLAY_EPOCH_KEY} keeps changing`);
      stored = now;
    } else {
      stored = marked;
    }
    epoch = parse(stored);
  }
  if (stored !== mine) held.set(owner, stored);
  return epoch.lost ? epoch.since : 0;
}

/**
 * Reads the epoch once at startup (`sentinel.ready()`), so that this instance witnesses a loss of the store's
 * markers from then on, not only from its first single-use credential. Why: an instance that had spent no marker
 * before the store restarted empty found no epoch and knew none, published one that knew of no loss, and accepted a
 * replay of what another instance had spent before the loss. A store that cannot answer is told to `warn` (startup
 * goes on; the first single-use credential reads the epoch, and fails closed if it still cannot).
 *
 * @example await witnessReplayEpoch(store, config, (message) => logger.warn(message));
 */
export async function witnessReplayEpoch(
  store: Pick<Store, 'get' | 'swap'>,
  owner: object,
  warn: (message: string) => void,
): Promise<void> {
  try {
    await markersKeptSince(store, owner);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    warn(
      `sentinel-idp: could not read the store's ${REPLAY_EPOCH_KEY} at startup (${reason}); ` +
        "a loss of the store's data before this instance's first single-use credential would go unseen",
    );
  }
}

/** The store keys of an account's single-use marker: see {@link accountMarkerKeys}. */
export interface AccountMarkerKeys {
  /** Where the marker is counted: the prefix, the account's short digest, then the credential's digest. */
  key: string;
  /** Where earlier versions counted it, with no account: still read until what they spent has expired. */
  earlierKey: string;
}

/**
 * The keys of a single-use marker (`assertion-jti`, `brand-jti`) of a credential of `accountId`. The key names the
 * account first, so that MemoryStore keeps each account's markers in an area of their own (security-state.ts): a
 * client of one account sending unique assertions as fast as it may can fill only its own account's area, never
 * refuse the credentials of every other account. The digest after it is the one earlier versions keyed the marker by.
 *
 * @example const { key, earlierKey } = accountMarkerKeys('assertion-jti', app.accountId, `${app.clientId}\u0000${jti}`);
 */
export function accountMarkerKeys(prefix: string, accountId: string, credential: string): AccountMarkerKeys {
  const id = digest(`${accountId}\u0000${credential}`);
  return { key: `${prefix}:${ownerDigest(accountId)}:${id}`, earlierKey: `${prefix}:${id}` };
}

/** Owner digests already computed; an instance serves a handful of accounts, so a small map holds them all. */
const ownerDigests = new Map<string, string>();
const OWNER_DIGESTS_KEPT = 1024;

/**
 * The {@link shortDigest} of a marker's owner (an account id, a DPoP proof's owner), remembered: every single-use
 * credential of the owner names it, and a SHA-256 through node:crypto costs about a microsecond, most of a marker's
 * key. Bounded: past {@link OWNER_DIGESTS_KEPT} owners the map starts over.
 *
 * @example const key = `dpop-jti:${ownerDigest(owner)}:${id}`;
 */
export function ownerDigest(owner: string): string {
  let value = ownerDigests.get(owner);
  if (value === undefined) {
    if (ownerDigests.size >= OWNER_DIGESTS_KEPT) ownerDigests.clear();
    value = shortDigest(owner);
    ownerDigests.set(owner, value);
  }
  return value;
}

/** The outcome of {@link spendOnce}. */
export type SpendOutcome = 'first' | 'replayed' | 'maybe-replayed';

/**
 * Spends a single-use marker: counts `key` (with `ttlMs`, the credential's remaining acceptance) and answers
 * `'first'` for its first use, `'replayed'` for a later one, and `'maybe-replayed'` when the store lost its markers
 * and the credential may have been spent before that (`madeAfter(sinceSeconds)` says whether its claims prove it
 * was made after `sinceSeconds`, seconds since the epoch). Refuse all but `'first'`. `keys` may name the key earlier
 * versions counted the marker under ({@link accountMarkerKeys}): a marker there, read beside the count, is a replay.
 *
 * @example
 * const outcome = await spendOnce(context.store, context.config, key, ttlMs, (since) => iat > since + tolerance + 1);
 */
export async function spendOnce(
  store: Pick<Store, 'get' | 'swap' | 'increment'>,
  owner: object,
  keys: string | AccountMarkerKeys,
  ttlMs: number,
  madeAfter: (sinceSeconds: number) => boolean,
): Promise<SpendOutcome> {
  const key = typeof keys === 'string' ? keys : keys.key;
  // Read beside the count, not before it: one round trip more on Redis' pipeline, not one more wait.
  const [count, earlier] = await Promise.all([store.increment(key, ttlMs), typeof keys === 'string' ? null : store.get(keys.earlierKey)]);
  if (countAnswered(count) !== 1 || earlier !== null) return 'replayed';
  const since = await markersKeptSince(store, owner);
  return since === 0 || madeAfter(since / 1000) ? 'first' : 'maybe-replayed';
}
