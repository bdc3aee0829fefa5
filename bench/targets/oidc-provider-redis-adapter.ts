/**
 * The Redis adapter oidc-provider's documentation describes (its example `Adapter` class over ioredis): plain
 * models as JSON strings, consumable ones (codes, refresh tokens) as hashes so `consume` can mark them, a list per
 * grant for `revokeByGrantId`, and a `uid` index for sessions. Each write is one MULTI; the grant list's TTL is read
 * first, as the example does. Not a target: the `redis` variant of oidc-provider-flow.ts passes it to the provider.
 */
import type { Redis } from 'ioredis';

const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);
const CONSUMABLE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

type Payload = Record<string, unknown> & { grantId?: string; userCode?: string; uid?: string };

/** Builds the adapter class oidc-provider instantiates once per model name, bound to one client and key prefix. */
export function redisAdapter(client: Redis, prefix: string) {
  const grantKeyFor = (id: string): string => `${prefix}grant:${id}`;
  const userCodeKeyFor = (userCode: string): string => `${prefix}userCode:${userCode}`;
  const uidKeyFor = (uid: string): string => `${prefix}uid:${uid}`;

  return class RedisAdapter {
    readonly name: string;

    constructor(name: string) {
      this.name = name;
    }

    key(id: string): string {
      return `${prefix}${this.name}:${id}`;
    }

    async upsert(id: string, payload: Payload, expiresIn: number): Promise<void> {
      const key = this.key(id);
      const multi = client.multi();
      if (CONSUMABLE.has(this.name)) multi.hset(key, { payload: JSON.stringify(payload) });
      else multi.set(key, JSON.stringify(payload));
      if (expiresIn) multi.expire(key, expiresIn);
      if (GRANTABLE.has(this.name) && payload.grantId) {
        const grantKey = grantKeyFor(payload.grantId);
        multi.rpush(grantKey, key);
        // Keep the grant's list at least as long as its longest-lived member.
        const ttl = await client.ttl(grantKey);
        if (expiresIn > ttl) multi.expire(grantKey, expiresIn);
      }
      if (payload.userCode) {
        const userCodeKey = userCodeKeyFor(payload.userCode);
        multi.set(userCodeKey, id);
        multi.expire(userCodeKey, expiresIn);
      }
      if (payload.uid) {
        const uidKey = uidKeyFor(payload.uid);
        multi.set(uidKey, id);
        multi.expire(uidKey, expiresIn);
      }
      await multi.exec();
    }

    async find(id: string): Promise<Payload | undefined> {
      if (CONSUMABLE.has(this.name)) {
        const data = await client.hgetall(this.key(id));
        if (data === null || Object.keys(data).length === 0) return undefined;
        const { payload, ...rest } = data;
        return { ...rest, ...(JSON.parse(payload ?? '{}') as Payload) };
      }
      const data = await client.get(this.key(id));
      return data === null ? undefined : (JSON.parse(data) as Payload);
    }

    async findByUid(uid: string): Promise<Payload | undefined> {
      const id = await client.get(uidKeyFor(uid));
      return id === null ? undefined : this.find(id);
    }

    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      const id = await client.get(userCodeKeyFor(userCode));
      return id === null ? undefined : this.find(id);
    }

    async destroy(id: string): Promise<void> {
      await client.del(this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const multi = client.multi();
      const tokens = await client.lrange(grantKeyFor(grantId), 0, -1);
      for (const token of tokens) multi.del(token);
      multi.del(grantKeyFor(grantId));
      await multi.exec();
    }

    async consume(id: string): Promise<void> {
      await client.hset(this.key(id), 'consumed', Math.floor(Date.now() / 1000));
    }
  };
}
