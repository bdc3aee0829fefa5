/**
 * The startup check of RedisStore: Redis must never evict what the service keeps. The store holds security state
 * (single-use codes and their grants, refresh-token families and revocations, throttling counters, the key ring):
 * under any `maxmemory-policy` other than `noeviction`, a full Redis silently drops some of it, and a dropped
 * revocation or counter fails open. With `noeviction` a full Redis refuses writes instead, which the service answers
 * with `500 server_error`.
 *
 * No ioredis here, not even its types: RedisStore reads the policies and hands them over.
 */

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

/**
 * The warning to give about the policies `read` returns, or `undefined` when every node has `noeviction`. When they
 * cannot be read (CONFIG renamed or disabled, as managed services do, refused by an ACL, or Redis unreachable), a
 * warning that the policy could not be checked: the operator has to confirm it.
 * @example const warning = await evictionWarning(async () => [{ policy: 'allkeys-lru' }]); // 'sentinel-idp: Redis maxmemory-policy is allkeys-lru, …'
 */
export async function evictionWarning(read: () => Promise<NodePolicy[]>): Promise<string | undefined> {
  let policies: NodePolicy[];
  try {
    policies = await read();
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'unknown failure';
    return (
      `sentinel-idp: could not check the Redis maxmemory-policy (${reason}); make sure it is ${SAFE_POLICY}, or ` +
      'Redis may evict security state (codes, grants, revocations, throttling counters) when full.'
    );
  }
  const unsafe = policies.filter(({ policy }) => policy !== SAFE_POLICY);
  if (unsafe.length === 0) return undefined;
  const found = unsafe.map(({ node, policy }) => (node === undefined ? policy : `${policy} on ${node}`)).join(', ');
  return (
    `sentinel-idp: Redis maxmemory-policy is ${found}, not ${SAFE_POLICY}: when Redis is full it may evict codes, ` +
    'grants, revocations, throttling counters or the key ring, and an evicted revocation or counter no longer ' +
    `protects anything. Set maxmemory-policy ${SAFE_POLICY} (and size maxmemory) for the Redis of RedisStore.`
  );
}
