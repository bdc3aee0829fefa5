/**
 * An in-memory `Adapter` for oidc-provider (the interface its documentation describes: upsert, find, findByUid,
 * findByUserCode, consume, destroy, revokeByGrantId) over plain Maps with expiry. oidc-provider's own development
 * adapter is an LRU of 1,000 entries, which evicts the codes a bench round mints before it can redeem them; this
 * one keeps every record until it expires, as sentinel-idp's MemoryStore does (200,000 entries in the bench). Not a
 * target: oidc-provider-flow.ts passes it to the provider.
 */
type Payload = Record<string, unknown> & { grantId?: string; userCode?: string; uid?: string; consumed?: number };

interface Entry {
  payload: Payload;
  expiresAt: number;
}

const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

/** Builds the adapter class oidc-provider instantiates once per model name; all models share one set of Maps. */
export function memoryAdapter() {
  const records = new Map<string, Entry>();
  const grants = new Map<string, Set<string>>();
  const uids = new Map<string, string>();
  const userCodes = new Map<string, string>();

  return class MemoryAdapter {
    readonly name: string;

    constructor(name: string) {
      this.name = name;
    }

    key(id: string): string {
      return `${this.name}:${id}`;
    }

    async upsert(id: string, payload: Payload, expiresIn: number): Promise<void> {
      const key = this.key(id);
      records.set(key, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Number.POSITIVE_INFINITY });
      if (GRANTABLE.has(this.name) && payload.grantId) {
        const members = grants.get(payload.grantId) ?? new Set<string>();
        members.add(key);
        grants.set(payload.grantId, members);
      }
      if (payload.userCode) userCodes.set(payload.userCode, id);
      if (payload.uid) uids.set(payload.uid, id);
    }

    async find(id: string): Promise<Payload | undefined> {
      const key = this.key(id);
      const entry = records.get(key);
      if (entry === undefined) return undefined;
      if (entry.expiresAt <= Date.now()) {
        records.delete(key);
        return undefined;
      }
      return entry.payload;
    }

    async findByUid(uid: string): Promise<Payload | undefined> {
      const id = uids.get(uid);
      return id === undefined ? undefined : this.find(id);
    }

    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      const id = userCodes.get(userCode);
      return id === undefined ? undefined : this.find(id);
    }

    async destroy(id: string): Promise<void> {
      records.delete(this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      for (const key of grants.get(grantId) ?? []) records.delete(key);
      grants.delete(grantId);
    }

    async consume(id: string): Promise<void> {
      const entry = records.get(this.key(id));
      if (entry !== undefined) entry.payload = { ...entry.payload, consumed: Math.floor(Date.now() / 1000) };
    }
  };
}
