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
 * Each instance reads the key once and keeps it. A stored key that cannot be read or written fails the request
 * (500): counting under a key of its own would split the counters, which is throttling no more.
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
// One key per resolved configuration, which is one per instance (every request-scoped context shares it). A read of
// the stored key in flight is shared too, and forgotten when it fails, so a later request tries again.
const keys = new WeakMap<object, Promise<Buffer>>();

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

async function storedKey(store: Store): Promise<Buffer> {
  const stored = await store.get(STORED_KEY);
  if (stored !== null) return parseStoredKey(stored);
  const fresh = randomBytes(KEY_BYTES).toString('base64url');
  // Set-if-absent: of instances creating it at the same moment one wins, and the others read the winner's.
  if (await store.swap([{ key: STORED_KEY, expect: null, value: fresh, ttlMs: STORED_KEY_TTL_MS }])) {
    return parseStoredKey(fresh);
  }
  const winner = await store.get(STORED_KEY);
  if (winner === null) throw new Error(`sentinel-idp: the store's ${STORED_KEY} could be neither created nor read`);
  return parseStoredKey(winner);
}

function keyOf(context: DigestContext): Promise<Buffer> {
  const { config } = context;
  const known = keys.get(config);
  if (known !== undefined) return known;
  const secret = configuredSecret(config);
  const key =
    secret === undefined
      ? storedKey(context.store)
      : Promise.resolve(Buffer.from(hkdfSync('sha256', Buffer.from(secret), Buffer.alloc(0), INFO, KEY_BYTES)));
  keys.set(config, key);
  key.catch(() => {
    if (keys.get(config) === key) keys.delete(config);
  });
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
