/**
 * Grants: the state behind user tokens. One grant is created per redeemed authorization code; its id (`gid`) is
 * carried by every access token and refresh token issued from that code. The grant record is the *only* thing a
 * user token needs from the store, and tokens are accepted only while it exists (a positive check): revoking
 * deletes it, and a store that lost it (an empty restart) has thereby revoked every token of it. Losing data can
 * end sessions early; it can never bring a revoked token back (RFC 6749 §4.1.2 and §10.5, RFC 9700 §4.14.2,
 * RFC 7009 §2.1; docs/store-design.md).
 *
 * Persisted as `grant:{gid}` until its refresh token and its last access token have expired: see
 * docs/ARCHITECTURE.md#stored-records.
 *
 * Refresh tokens are `gid.generation.family.secret`. The grant holds the current generation and digests of the
 * family secret (shared by every generation of the grant) and of the current secret: short digests (random-secrets.ts
 * `shortDigest`, 132 bits), or in a grant of an earlier version the full ones, which still match, and whose family
 * digest the next rotation shortens. A token of an older
 * generation whose family secret matches was really issued for this grant and rotated since: that is reuse
 * (RFC 9700 §4.14.2), detected without remembering anything per rotation. The family digest is what stops a forged
 * `gid.0.x.y` (the gid is public) from revoking someone else's grant.
 */
import type { RevocationCheck } from '../guard/access-token-jwt.js';
import type { AccessTokenClaims } from './access-token.js';
import type { SentinelContext } from '../http/context.js';
import { retryShortly } from '../errors.js';
import { matchesStoredDigest, randomSecret, SHORT_DIGEST_LENGTH, shortDigest } from '../lib/random-secrets.js';
import { decodeGrant, encodeGrant, type GrantRecord, type GrantRefreshState } from './grant-encoding.js';
import { anyDelegatedRevoked, grantlessDelegationRevoked, isDelegated, revokeDelegatedToken } from './delegated-revocations.js';

export type { GrantRecord, GrantRefreshState } from './grant-encoding.js';

/** What a refresh token stands for (the view of the grant that introspection and revocation describe). */
export interface RefreshRecord {
  grantId: string;
  accountId: string;
  clientId: string;
  userId: string;
  scope?: string | undefined;
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

/** A stored grant with the exact text it was read as (what a later swap must expect). */
export interface StoredGrant {
  raw: string;
  grant: GrantRecord;
}

/** The parts of a presented refresh token. */
export interface PresentedRefreshToken {
  grantId: string;
  gen: number;
  family: string;
  secret: string;
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** The store key of a grant; the braces are the Redis Cluster hash tag it shares with its code's key. */
export function grantKey(grantId: string): string {
  return `grant:{${grantId}}`;
}

/**
 * Reads a grant; `null` when the store does not have it (never created, expired, revoked, or lost) or holds a value
 * that is not a grant (grant-encoding.ts): a grant that cannot be read is no grant, so its tokens are refused.
 */
export async function readGrant(context: SentinelContext, grantId: string): Promise<StoredGrant | null> {
  const raw = await context.store.get(grantKey(grantId));
  const grant = decodeGrant(raw);
  return raw === null || grant === null ? null : { raw, grant };
}

/**
 * How long the grant record must stay: while its current refresh token can be used, and while any access token
 * issued from it can (the liveness check reads it).
 */
export function grantTtlMs(context: SentinelContext, grant: GrantRecord): number {
  const refreshEnd = grant.refresh === null ? 0 : Math.min(grant.refresh.expiresAt, grant.absoluteExpiresAt);
  const end = Math.max(refreshEnd, grant.accessUntil + context.config.clockTolerance);
  return Math.max(1, end - nowSeconds()) * 1000;
}

/**
 * Until when the session index must list a new grant (seconds since the epoch): the latest moment any token of it
 * can be used. A refresh right before the absolute end issues an access token that lives one access-token lifetime
 * past it.
 *
 * @example const until = grantIndexUntil(context, grant);
 */
export function grantIndexUntil(context: SentinelContext, grant: GrantRecord): number {
  const { accessTokenTtl, clockTolerance } = context.config;
  return Math.max(grant.absoluteExpiresAt, grant.accessUntil) + accessTokenTtl + clockTolerance;
}

const GRANT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const GENERATION = /^(0|[1-9][0-9]{0,8})$/;
const SECRET = /^[A-Za-z0-9_-]{43}$/;

/** Splits a presented refresh token into its parts; `null` for anything not shaped like one of ours. */
export function parseRefreshToken(token: string): PresentedRefreshToken | null {
  const parts = token.split('.');
  if (parts.length !== 4) return null;
  const [grantId, gen, family, secret] = parts as [string, string, string, string];
  if (!GRANT_ID.test(grantId) || !GENERATION.test(gen) || !SECRET.test(family) || !SECRET.test(secret)) return null;
  return { grantId, gen: Number(gen), family, secret };
}

/**
 * The refresh state of a new generation and the token that proves it. `family` is the family secret: new for a
 * new grant, carried over from the presented token on rotation.
 */
export function nextRefreshGeneration(
  context: SentinelContext,
  grantId: string,
  input: {
    gen: number;
    family: string;
    /**
     * The family's digest when already known (a rotation: the grant holds it), so it is not hashed again. A full
     * digest of an earlier version is stored cut to the short one, its prefix.
     */
    familyDigest?: string | undefined;
    absoluteExpiresAt: number;
    jkt?: string | undefined;
  },
): { state: GrantRefreshState; token: string } | null {
  const issuedAt = nowSeconds();
  const remaining = input.absoluteExpiresAt - issuedAt;
  if (remaining <= 0) return null;
  const secret = randomSecret();
  const state: GrantRefreshState = {
    gen: input.gen,
    family: input.familyDigest?.slice(0, SHORT_DIGEST_LENGTH) ?? shortDigest(input.family),
    current: shortDigest(secret),
    issuedAt,
    expiresAt: issuedAt + Math.min(context.config.refreshToken.idleTtl, remaining),
  };
  // Set in place, not spread from a conditional literal: this runs at every code exchange and refresh.
  if (input.jkt !== undefined) state.jkt = input.jkt;
  return { state, token: `${grantId}.${input.gen}.${input.family}.${secret}` };
}

/** What a presented refresh token is, measured against its grant. */
export type RefreshStanding =
  | { kind: 'current' }
  | { kind: 'invalid' }
  | { kind: 'expired' }
  /** The previous generation, moments after it was rotated: possibly a client retrying after a lost answer. */
  | { kind: 'just-rotated' }
  /** A genuine token of an older generation: reuse. */
  | { kind: 'reused' };

/**
 * Classifies a presented refresh token against its grant (constant-time digest comparisons). Only a token with the
 * grant's family secret can be `reused` or `just-rotated`; anything else that is not the current one is `invalid`.
 */
export function refreshStanding(context: SentinelContext, grant: GrantRecord, presented: PresentedRefreshToken): RefreshStanding {
  const refresh = grant.refresh;
  if (refresh === null || !matchesStoredDigest(presented.family, refresh.family)) return { kind: 'invalid' };
  if (presented.gen < refresh.gen) {
    const retrying = presented.gen === refresh.gen - 1 && nowSeconds() < grant.changedAt + context.config.retryGrace;
    return { kind: retrying ? 'just-rotated' : 'reused' };
  }
  if (presented.gen !== refresh.gen || !matchesStoredDigest(presented.secret, refresh.current)) return { kind: 'invalid' };
  const now = nowSeconds();
  return refresh.expiresAt <= now || grant.absoluteExpiresAt <= now ? { kind: 'expired' } : { kind: 'current' };
}

/**
 * Which refresh tokens {@link findRefreshRecord} finds: only the grant's current, unexpired one (introspection), or
 * any its grant's family secret proves was issued for it, rotated since or expired too (revocation, which takes the
 * whole grant for any of them: RFC 7009 §2.1, RFC 9700 §4.14.2).
 */
export type RefreshGenerations = 'current' | 'family';

/**
 * The refresh record of a refresh token (for introspection and revocation), or `null`: of the current one, or with
 * `'family'` of any genuine token of its grant, whose record then describes the grant's current generation.
 */
export async function findRefreshRecord(
  context: SentinelContext,
  token: string,
  generations: RefreshGenerations,
): Promise<RefreshRecord | null> {
  const presented = parseRefreshToken(token);
  if (presented === null) return null;
  const found = await readGrant(context, presented.grantId);
  if (found === null) return null;
  const standing = refreshStanding(context, found.grant, presented).kind;
  // `invalid` is everything the family digest does not vouch for, such as a forged older generation of a public gid.
  if (standing !== 'current' && (generations === 'current' || standing === 'invalid')) return null;
  const { grant } = found;
  const refresh = grant.refresh as GrantRefreshState;
  return {
    grantId: presented.grantId,
    accountId: grant.accountId,
    clientId: grant.clientId,
    userId: grant.userId,
    scope: grant.scope,
    authTime: grant.authTime,
    createdAt: refresh.issuedAt,
    expiresAt: refresh.expiresAt,
    absoluteExpiresAt: grant.absoluteExpiresAt,
    ...(refresh.jkt === undefined ? {} : { jkt: refresh.jkt }),
  };
}

/**
 * Revokes a grant: deleting it is the whole revocation. Every access token and refresh token of the grant is
 * refused from then on, because they are accepted only while the grant exists; a rotation or redemption racing
 * with this cannot bring it back, because their swaps expect the record (or its absence before the code is spent)
 * exactly as they read it.
 *
 * @example await revokeGrant(context, claims.gid); // the ended grant's record, or null when it was already gone
 */
export async function revokeGrant(context: SentinelContext, grantId: string): Promise<GrantRecord | null> {
  const found = await readGrant(context, grantId);
  await context.store.delete(grantKey(grantId));
  // Returned so that audit events of a replay can name the grant's user.
  return found?.grant ?? null;
}

/**
 * How often {@link revokeAccessToken} re-reads a grant that another instance changed under it before it gives up (a
 * 503 with `Retry-After`). Generous: each lost swap means another writer made progress, and within one instance the revocations of a
 * grant already take turns, so only other instances' writers (and rotations) compete.
 */
const REVOKE_ATTEMPTS = 64;
/** The longest pause, in milliseconds, before a revocation that lost its swap reads the grant again. */
const LOST_SWAP_PAUSE_MAX_MS = 32;

/**
 * Most revoked, still unexpired access tokens one grant remembers. The record is read on every check of the grant's
 * tokens, and an app that issues and revokes in a loop would otherwise grow it without bound; past the bound the
 * grant itself ends, which revokes every token of it. Only the grant's own client can get there: a delegated token
 * (RFC 8693), issued to another client, is revoked apart from the grant (delegated-revocations.ts).
 */
export const MAX_REVOKED_ACCESS_TOKENS = 64;

/**
 * Per instance of the service, per grant id: the tail of the revocations of that grant, which the next one waits
 * for. A grant is present only while a revocation of it runs or waits; a WeakMap, so an instance that is dropped
 * takes its chains with it.
 */
const revocationChains = new WeakMap<object, Map<string, Promise<void>>>();

/**
 * Runs `revoke` once the revocations of `grantId` queued before it in this instance have settled, and answers what
 * it does. Why: every revocation rewrites the one grant record with a compare-and-set, so concurrent ones of one
 * grant would mostly lose to each other and retry; taking turns, each wins at its first attempt unless another
 * instance wrote in between. `instance` only identifies the instance: its resolved configuration, the one object
 * every request's context shares (not the store, which a traced request wraps anew).
 */
function afterEarlierRevocations(instance: object, grantId: string, revoke: () => Promise<void>): Promise<void> {
  let chains = revocationChains.get(instance);
  if (chains === undefined) {
    chains = new Map();
    revocationChains.set(instance, chains);
  }
  const byGrant = chains;
  const run = (byGrant.get(grantId) ?? Promise.resolve()).then(revoke);
  // The tail never rejects: a failed revocation answers its own caller, and the next one still runs.
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  byGrant.set(grantId, tail);
  // The last revocation of the chain removes it, so idle grants leave nothing behind.
  void tail.then(() => {
    if (byGrant.get(grantId) === tail) byGrant.delete(grantId);
  });
  return run;
}

/**
 * A random pause of up to 1, 2, 4, … (at most {@link LOST_SWAP_PAUSE_MAX_MS}) ms after the `attempt`-th lost swap,
 * so that instances racing for one grant do not all read it again at once and collide again.
 */
function pauseAfterLostSwap(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(LOST_SWAP_PAUSE_MAX_MS, 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Revokes one access token until it expires (RFC 7009 §2.1) by writing its jti into its grant. A grant that is
 * gone has no live tokens left, so there is nothing to do. Only user tokens (with a `gid`) are checked on use, so
 * only they may be revoked this way. Past {@link MAX_REVOKED_ACCESS_TOKENS} the grant ends instead. Revocations of
 * one grant take turns within this instance; one that loses its swap to another instance reads the grant again,
 * after a short random pause, up to {@link REVOKE_ATTEMPTS} times; past them the client hears 503 with `Retry-After`
 * (RFC 7009 §2.2.1: it assumes the token still exists and retries).
 *
 * A delegated token (with `act`) is held by the actor, not by the grant's client: its revocation is a marker of its
 * own and leaves the grant alone, so an actor revoking its tokens can neither grow nor end the subject's grant.
 */
export async function revokeAccessToken(context: SentinelContext, claims: AccessTokenClaims): Promise<void> {
  // First: a consumer's delegated token has no grant, and its marker is all there is to its revocation.
  if (isDelegated(claims)) return revokeDelegatedToken(context, claims);
  const grantId = claims.gid;
  if (typeof grantId !== 'string') return;
  await afterEarlierRevocations(context.config, grantId, async () => {
    for (let attempt = 0; attempt < REVOKE_ATTEMPTS; attempt++) {
      if (attempt > 0) await pauseAfterLostSwap(attempt - 1);
      if (await writeRevokedJti(context, grantId, claims)) return;
    }
    // Every loss was another writer's progress on the grant (the client's refreshes, other instances' revocations):
    // contention, not a fault for onError. RFC 7009 §2.2.1: on a 503 the client assumes the token still exists and
    // retries after a delay, which is exactly the state it is in.
    throw retryShortly('the grant was changing while the token was being revoked; retry shortly');
  });
}

/**
 * One attempt of {@link revokeAccessToken}: `true` when it is done (the jti written, the grant ended at the bound, or
 * the grant gone), `false` when another writer changed the grant since it was read.
 */
async function writeRevokedJti(context: SentinelContext, grantId: string, claims: AccessTokenClaims): Promise<boolean> {
  const found = await readGrant(context, grantId);
  if (found === null) return true;
  const now = nowSeconds();
  const revokedJtis: Record<string, number> = {};
  for (const [jti, exp] of Object.entries(found.grant.revokedJtis ?? {})) {
    if (exp + context.config.clockTolerance > now) revokedJtis[jti] = exp;
  }
  revokedJtis[claims.jti] = claims.exp;
  if (Object.keys(revokedJtis).length > MAX_REVOKED_ACCESS_TOKENS) {
    const { accountId, clientId, userId } = found.grant;
    await revokeGrant(context, grantId);
    // The grant is gone whatever the hook says: committed, so the revocation that caused it is not answered 500.
    context.emit({ type: 'grant.ended', accountId, clientId, userId, reason: 'revocations-limit' }, 'committed');
    return true;
  }
  const next: GrantRecord = { ...found.grant, revokedJtis };
  return context.store.swap([{ key: grantKey(grantId), expect: found.raw, value: encodeGrant(next), ttlMs: grantTtlMs(context, next) }]);
}

/**
 * The liveness check `verifyAccessTokenJWT` runs: a user token (it carries `gid`) is accepted only while its grant
 * exists, belongs to the token's client and user, and has revoked neither the token's `jti` nor, for a delegated
 * token, that of any token it was delegated from (`delegated_from`) — one store read. A grant the store does not
 * have is not live, so lost state refuses tokens instead of un-revoking them. A delegated token (with `act`) also
 * reads the revocation markers of its own `jti` and of those it was delegated from (delegated-revocations.ts), in
 * parallel; every other token's check stays the one grant read. A consumer's delegated token has no `gid`: those
 * markers, and the replay epoch that tells whether the store lost them since it was issued, are its whole check.
 * Consumer-bound tokens of the app itself and app tokens carry neither `gid` nor `act`
 * and never touch the store, which keeps the token-retrieval API's hot path store-free.
 *
 * @example const claims = await verifyAccessTokenJWT(context, token, {}, createRevocationCheck(context));
 */
export function createRevocationCheck(context: SentinelContext): RevocationCheck {
  return async (claims) => {
    const chain = claims.delegated_from;
    // A consumer's delegated token lives on no grant: its markers, and those of its chain, are its whole liveness
    // (refused, too, when issued before the store lost them).
    if (typeof claims.gid !== 'string') return isDelegated(claims) && grantlessDelegationRevoked(context, claims);
    const found = await readGrant(context, claims.gid);
    if (found === null) return true;
    const { grant } = found;
    // A delegated token (RFC 8693) is issued to the actor but lives on the subject's grant, whose client it names.
    const grantClient = typeof claims.grant_client_id === 'string' ? claims.grant_client_id : claims.client_id;
    if (grant.clientId !== grantClient || grant.userId !== claims.sub) return true;
    const revoked = grant.revokedJtis;
    if (revoked !== undefined) {
      if (revoked[claims.jti] !== undefined) return true;
      // Nor may it outlive a token it was delegated from: the subject's own tokens are revoked into this same grant.
      if (Array.isArray(chain) && chain.some((jti) => typeof jti === 'string' && revoked[jti] !== undefined)) return true;
    }
    if (!isDelegated(claims)) return false;
    // Delegated tokens, its own and those further up its chain, are revoked under markers of their own.
    return anyDelegatedRevoked(context, claims.iss, delegationJtis(claims.jti, chain));
  };
}

/** A delegated token's own `jti` and those it was delegated from, whose revocation markers it must not outlive. */
function delegationJtis(jti: string, chain: unknown): unknown[] {
  return Array.isArray(chain) ? [jti, ...chain] : [jti];
}
