/**
 * The digests of what people type at the sign-in pages: a username in a throttle counter's store key and in the
 * `login.failed` / `login.throttled` events. A plain SHA-256 of a typed name is undone with a wordlist, and people type
 * their password into the username field often enough: an audit log or a listing of the store's keys would hand
 * those passwords to whoever reads it. So the digest is an HMAC under a key of the service, the same on every
 * instance (their counters must meet):
 *
 * - `throttle.digestKey` when given;
 * - else derived from `keyRotation.encryptionKey`, a secret every instance of one deployment shares already;
 * - else a random key kept in the store (`throttle:digest-key`), created once by whichever instance needs it first
 *   and read by every other. Not derived from `keys`: instances whose `keys` lists differ, as they do while a new
 *   key is rolled out instance by instance, would count the same username under different keys, and every change
 *   of `keys` would start every counter afresh.
 *
 * The stored key is read again at every digest (one store read beside the throttle's counter operations; sign-ins
 * are not the hot path), because the store can lose it: Redis restarted empty, or evicted it. An instance that keeps
 * the key it read once would then count under its own key while a new instance (or one that reads afresh) makes
 * another: one username counted under two counters, `maxFailures` guesses per instance. So an instance that finds the
 * key missing publishes the one it holds (set-if-absent) and every instance adopts whatever is stored: they converge
 * on one key at their next attempt. A stored key that cannot be read or written fails the request (500): counting
 * under a key of its own would split the counters, which is throttling no more.
 */
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { SentinelContext } from '../../http/context.js';
import type { Store } from '../../stores/store.js';

/** What the key of the digests comes from: the configuration's secrets, else the store. */
export type DigestContext = Pick<SentinelContext, 'config' | 'store'>;

const INFO = 'sentinel-idp identifier digest';
// Under the `throttle` prefix: MemoryStore keeps it as security state, never evicted to make room.
const STORED_KEY = 'throttle:digest-key';
// The stored key never expires by itself; Store.swap needs a lifetime, so give it ten years (as the key ring).
const STORED_KEY_TTL_MS = 10 * 365 * 24 * 3600 * 1000;
const KEY_BYTES = 32;
// Per resolved configuration, which is one per instance (every request-scoped context shares it): the key derived
// from the configuration's secret, computed once.
const derived = new WeakMap<object, Buffer>();
// Per instance: the stored key it last read or published, which it publishes again when the store has lost it.
const held = new WeakMap<object, Buffer>();

function configuredSecret(config: DigestContext['config']): string | undefined {
  return config.throttle.digestKey ?? config.keyRotation?.encryptionKey;
}

function parseStoredKey(stored: string): Buffer {
  const key = Buffer.from(stored, 'base64url');
  // Not what an instance wrote: digesting under anything else would split the counters, so fail closed.
  if (key.length !== KEY_BYTES || key.toString('base64url') !== stored) {
    throw new Error(`sentinel-idp: the store's ${STORED_KEY} is not a digest key; delete it to have a new one made`);
  }
  return key;
}

function adopt(config: object, stored: string): Buffer {
  const key = parseStoredKey(stored);
  held.set(config, key);
  return key;
}

async function storedKey(config: object, store: Store): Promise<Buffer> {
  const stored = await store.get(STORED_KEY);
  if (stored !== null) return adopt(config, stored);
  // Missing: never written yet, or lost. The key this instance counts under goes back, so that the counters of the
  // instances still holding it go on meeting; a fresh one only from an instance that holds none.
  const mine = (held.get(config) ?? randomBytes(KEY_BYTES)).toString('base64url');
  // Set-if-absent: of instances publishing at the same moment one wins, and the others adopt the winner's.
  if (await store.swap([{ key: STORED_KEY, expect: null, value: mine, ttlMs: STORED_KEY_TTL_MS }])) return adopt(config, mine);
  const winner = await store.get(STORED_KEY);
  if (winner === null) throw new Error(`sentinel-idp: the store's ${STORED_KEY} could be neither created nor read`);
  return adopt(config, winner);
}

async function keyOf(context: DigestContext): Promise<Buffer> {
  const { config } = context;
  const secret = configuredSecret(config);
  if (secret === undefined) return storedKey(config, context.store);
  let key = derived.get(config);
  if (key === undefined) {
    key = Buffer.from(hkdfSync('sha256', Buffer.from(secret), Buffer.alloc(0), INFO, KEY_BYTES));
    derived.set(config, key);
  }
  return key;
}

/**
 * The digest of `text` (base64url, 43 characters): an HMAC-SHA-256 under the service's key, see above. Rejects when
 * the key is to come from the store and the store fails or holds something else.
 *
 * @example await identifierDigest(context, `${accountId}\u0000${username}`)
 */
export async function identifierDigest(context: DigestContext, text: string): Promise<string> {
  return createHmac('sha256', await keyOf(context))
    .update(text)
    .digest('base64url');
}
