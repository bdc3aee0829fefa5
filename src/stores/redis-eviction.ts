/**
 * The startup check of RedisStore: Redis must never evict what the service keeps. The store holds security state
 * (single-use codes and their grants, refresh-token families and revocations, throttling counters, the key ring):
 * under any `maxmemory-policy` other than `noeviction`, a full Redis silently drops some of it, and a dropped
 * revocation or counter fails open. With `noeviction` a full Redis refuses writes instead, which the service answers
 * with `500 server_error`.
 * So a policy that may evict stops the start (RedisStore `allowEviction` makes it a warning), and one that cannot be
 * read is warned about.
 *
 * No ioredis here, not even its types: RedisStore reads the policies and hands them over.
 */

/** What {@link untilReady} needs of an ioredis `Redis` or `Cluster`: its status and its events. */
export interface ConnectingClient {
  readonly status: string;
  once(event: 'ready' | 'end', listener: () => void): unknown;
  removeListener(event: 'ready' | 'end', listener: () => void): unknown;
}

/** The statuses of a client on its way to `ready` (first connection, or reconnecting after a loss). */
const CONNECTING = new Set(['connecting', 'connect', 'reconnecting']);

/**
 * Resolves once `client` is ready, has ended, or `boundMs` has passed (`0`: no bound), at once when it is not on its
 * way to ready. Why: `sentinel.ready()` runs right after the client is made, and without an offline queue (as
 * `redisClientOptions()` and `redisClusterOptions()` make it) a command sent before the connection is up fails at
 * once, so the one check of the store's life said only that the policy could not be read, never which it was. Never
 * connects a client itself (a `lazyConnect` one stays as it is): the client is the caller's.
 *
 * @example await untilReady(client, 2000); const policies = await readPolicies();
 */
export async function untilReady(client: ConnectingClient, boundMs: number): Promise<void> {
  if (!CONNECTING.has(client.status)) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      client.removeListener('ready', done);
      client.removeListener('end', done);
      resolve();
    };
    const timer = boundMs === 0 ? undefined : setTimeout(done, boundMs);
    client.once('ready', done);
    client.once('end', done);
  });
}

/** The one policy under which Redis refuses a write rather than drop a key. */
export const SAFE_POLICY = 'noeviction';

/** The policy of one node; `node` names it (`host:port`) on a cluster. */
export interface NodePolicy {
  node?: string | undefined;
  policy: string;
}

/**
 * The policy out of a `CONFIG GET maxmemory-policy` reply (`[name, value]`).
 * @throws Error when the reply holds none.
 * @example policyOfReply(['maxmemory-policy', 'noeviction']) // 'noeviction'
 */
export function policyOfReply(reply: unknown): string {
  const value = Array.isArray(reply) ? (reply as unknown[])[1] : undefined;
  if (typeof value !== 'string') throw new Error('RedisStore: CONFIG GET maxmemory-policy gave no value');
  return value;
}

/** What the startup check found: a policy that may evict, or none that could be read. */
export interface EvictionFinding {
  /** `evicting`: a node's policy is known and not `noeviction`; `unread`: the policy could not be read. */
  kind: 'evicting' | 'unread';
  message: string;
}

/**
 * What the policies `read` returns say, or `undefined` when every node has `noeviction`. When they cannot be read
 * (CONFIG renamed or disabled, as managed services do, refused by an ACL, or Redis unreachable), that the policy could
 * not be checked: the operator has to confirm it.
 * @example const finding = await evictionFinding(async () => [{ policy: 'allkeys-lru' }]); // { kind: 'evicting', message: 'sentinel-idp: Redis maxmemory-policy is allkeys-lru, …' }
 */
export async function evictionFinding(read: () => Promise<NodePolicy[]>): Promise<EvictionFinding | undefined> {
  let policies: NodePolicy[];
  try {
    policies = await read();
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'unknown failure';
    return {
      kind: 'unread',
      message:
        `sentinel-idp: could not check the Redis maxmemory-policy (${reason}); make sure it is ${SAFE_POLICY}, or ` +
        'Redis may evict security state (codes, grants, revocations, throttling counters) when full.',
    };
  }
  const unsafe = policies.filter(({ policy }) => policy !== SAFE_POLICY);
  if (unsafe.length === 0) return undefined;
  const found = unsafe.map(({ node, policy }) => (node === undefined ? policy : `${policy} on ${node}`)).join(', ');
  return {
    kind: 'evicting',
    message:
      `sentinel-idp: Redis maxmemory-policy is ${found}, not ${SAFE_POLICY}: when Redis is full it may evict codes, ` +
      'grants, revocations, throttling counters or the key ring, and an evicted revocation or counter no longer ' +
      `protects anything. Set maxmemory-policy ${SAFE_POLICY} (and size maxmemory) for the Redis of RedisStore.`,
  };
}
