/**
 * Grants: the state behind user tokens. One grant is created per redeemed authorization code; its id (`gid`) is
 * carried by every access token and refresh token issued from that code, so the whole family can be revoked at
 * once (RFC 6749 §4.1.2 and §10.5 on code replay, RFC 9700 §4.14.2 on refresh-token reuse, RFC 7009 §2.1).
 *
 * Persisted payloads (see `stores/store.ts`):
 *
 * | key                     | value                                  | TTL                                       |
 * |-------------------------|----------------------------------------|-------------------------------------------|
 * | `grant:{gid}`           | {@link GrantRecord}                    | until the grant's absolute expiry         |
 * | `refresh:{sha256}`      | {@link RefreshRecord}                  | idle lifetime, capped by absolute expiry  |
 * | `refresh-used:{sha256}` | gid of a rotated refresh token         | until the grant's absolute expiry         |
 * | `revoked:grant:{gid}`   | `1`                                    | max(access, refresh absolute) lifetime    |
 * | `revoked:jti:{jti}`     | `1`                                    | until that access token expires           |
 */
import type { AccessTokenClaims, RevocationCheck } from '../access-token.js';
import type { SentinelContext } from '../context.js';
import { digest, randomSecret } from '../secrets.js';

/** Which refresh token is the live one of a grant. Persisted as JSON under `grant:{gid}`. */
export interface GrantRecord {
  accountId: string;
  clientId: string;
  userId: string;
  /** Digest of the grant's current refresh token, `null` when the app gets none. */
  refreshDigest: string | null;
  /** Seconds since the epoch after which no refresh token of the grant is accepted. */
  absoluteExpiresAt: number;
}

/** What a refresh token stands for. Persisted as JSON under `refresh:{sha256(token)}`. */
export interface RefreshRecord {
  grantId: string;
  accountId: string;
  clientId: string;
  userId: string;
  /** The scope of the original grant (a refresh may narrow the access token's scope, never this). */
  scope?: string | undefined;
  /** Seconds since the epoch when the user authenticated. */
  authTime: number;
  /** Seconds since the epoch when this refresh token was issued. */
  createdAt: number;
  /** Seconds since the epoch when this refresh token expires (idle lifetime, capped by the absolute one). */
  expiresAt: number;
  /** Seconds since the epoch when the grant itself ends, whatever the rotations. */
  absoluteExpiresAt: number;
  /** DPoP key thumbprint a public client's refresh token is bound to (RFC 9449 §5). */
  jkt?: string | undefined;
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** The store key of a refresh token. */
export function refreshKey(token: string): string {
  return `refresh:${digest(token)}`;
}

function grantKey(grantId: string): string {
  return `grant:${grantId}`;
}

function revokedGrantKey(grantId: string): string {
  return `revoked:grant:${grantId}`;
}

function revokedJTIKey(jti: string): string {
  return `revoked:jti:${jti}`;
}

/** Parses a stored refresh record; `null` for an absent one. */
export function parseRefreshRecord(stored: string | null): RefreshRecord | null {
  return stored === null ? null : (JSON.parse(stored) as RefreshRecord);
}

/** Input of {@link storeRefreshToken}: the grant a new refresh token belongs to (its times are set on storing). */
export type RefreshTokenInput = Omit<RefreshRecord, 'createdAt' | 'expiresAt'>;

/**
 * Creates the grant's next refresh token and makes it the grant's live one. Returns the plain token (for the
 * response only), or `null` when the grant has no lifetime left.
 *
 * @example
 * const refreshToken = await storeRefreshToken(context, { grantId, accountId, clientId, userId, authTime, absoluteExpiresAt });
 */
export async function storeRefreshToken(context: SentinelContext, input: RefreshTokenInput): Promise<string | null> {
  const createdAt = nowSeconds();
  const remaining = input.absoluteExpiresAt - createdAt;
  if (remaining <= 0) return null;
  const lifetime = Math.min(context.config.refreshToken.idleTtl, remaining);
  const token = randomSecret();
  const record: RefreshRecord = { ...input, createdAt, expiresAt: createdAt + lifetime };
  const grant: GrantRecord = {
    accountId: input.accountId,
    clientId: input.clientId,
    userId: input.userId,
    refreshDigest: digest(token),
    absoluteExpiresAt: input.absoluteExpiresAt,
  };
  await context.store.set(refreshKey(token), JSON.stringify(record), lifetime * 1000);
  await context.store.set(grantKey(input.grantId), JSON.stringify(grant), remaining * 1000);
  return token;
}

/**
 * Remembers that a refresh token was rotated, so that presenting it again is recognised as reuse (RFC 9700
 * §4.14.2) for as long as its grant could still live.
 */
export async function markRefreshTokenUsed(context: SentinelContext, token: string, record: RefreshRecord): Promise<void> {
  const remaining = record.absoluteExpiresAt - nowSeconds();
  if (remaining > 0) await context.store.set(`refresh-used:${digest(token)}`, record.grantId, remaining * 1000);
}

/** The grant id of a rotated refresh token, or `null` when the token was never seen or its grant is over. */
export async function findUsedRefreshToken(context: SentinelContext, token: string): Promise<string | null> {
  return context.store.get(`refresh-used:${digest(token)}`);
}

/**
 * Revokes a grant: its access tokens are refused from now on and its live refresh token is deleted.
 *
 * The marker outlives every token the grant may still hold (access tokens and the refresh absolute lifetime):
 * a redemption or rotation that raced with this revocation may store its refresh token after the deletion below,
 * and the refresh grant refuses tokens of a marked grant.
 *
 * @example await revokeGrant(context, claims.gid); // the ended grant's record, or null when it was already gone
 */
export async function revokeGrant(context: SentinelContext, grantId: string): Promise<GrantRecord | null> {
  const { accessTokenTtl, clockTolerance, refreshToken } = context.config;
  const lifetime = Math.max(accessTokenTtl, refreshToken.absoluteTtl) + clockTolerance;
  await context.store.set(revokedGrantKey(grantId), '1', lifetime * 1000);
  const stored = await context.store.get(grantKey(grantId));
  if (stored === null) return null;
  const grant = JSON.parse(stored) as GrantRecord;
  if (grant.refreshDigest !== null) await context.store.delete(`refresh:${grant.refreshDigest}`);
  await context.store.delete(grantKey(grantId));
  // Returned so that audit events of a replay can name the grant's user.
  return grant;
}

/** True when the grant was revoked (code replay, refresh reuse, or revocation request). */
export async function isGrantRevoked(context: SentinelContext, grantId: string): Promise<boolean> {
  return (await context.store.get(revokedGrantKey(grantId))) !== null;
}

/**
 * Revokes one access token until it expires (RFC 7009 §2.1). Only user tokens (with a `gid`) are checked on use,
 * so only they may be revoked this way.
 */
export async function revokeAccessToken(context: SentinelContext, claims: AccessTokenClaims): Promise<void> {
  const remaining = claims.exp + context.config.clockTolerance - nowSeconds();
  if (remaining > 0) await context.store.set(revokedJTIKey(claims.jti), '1', remaining * 1000);
}

/**
 * The revocation check `verifyAccessToken` runs: user tokens (they carry `gid`) are refused when their grant or
 * their own `jti` was revoked. Consumer-bound and app tokens carry no `gid` and never touch the store, which keeps
 * the token-retrieval API's hot path store-free.
 *
 * @example const claims = await verifyAccessToken(context, token, {}, createRevocationCheck(context));
 */
export function createRevocationCheck(context: SentinelContext): RevocationCheck {
  return async (claims) => {
    if (typeof claims.gid !== 'string') return false;
    const [grant, token] = await Promise.all([
      context.store.get(revokedGrantKey(claims.gid)),
      context.store.get(revokedJTIKey(claims.jti)),
    ]);
    return grant !== null || token !== null;
  };
}
