/**
 * Revoked delegated tokens (RFC 7009 of an RFC 8693 delegation). A delegated user token is issued to the actor but
 * lives on the subject's grant, which belongs to another client: writing its revocation into that grant (as a grant's
 * own access tokens are) would let the actor grow the record of someone else's grant and, past
 * `MAX_REVOKED_ACCESS_TOKENS`, end it. So its revocation is a record of its own, `revoked-jti:`*jti*, kept as
 * security state (never evicted by MemoryStore) until the token could no longer pass anyway. Only the liveness check
 * of delegated tokens (those with `act`) reads it; every other token's check stays the one grant read.
 *
 * Persisted as `revoked-jti:`*jti*: see docs/ARCHITECTURE.md#stored-records.
 */
import type { AccessTokenClaims } from './access-token-claims.js';
import type { SentinelContext } from '../http/context.js';
import { markersKeptSince } from '../stores/replay-epoch.js';
import { shortDigest } from '../lib/random-secrets.js';

/**
 * The store key of a revoked delegated token: its account (a digest of the token's `iss`, the account's issuer) and
 * its `jti` (a random UUID this service chose, no secret). The account comes first so that MemoryStore gives each
 * account's revocations a budget of their own (src/stores/security-state.ts): one account's bot revoking in a loop
 * can then refuse only its own account's revocations, never another's.
 *
 * @example revokedJtiKey('https://id.example/sentinel/api/account/acme', claims.jti) // 'revoked-jti:…:…'
 */
export function revokedJtiKey(issuer: string, jti: string): string {
  return `revoked-jti:${shortDigest(issuer)}:${jti}`;
}

/**
 * The key earlier versions wrote a revocation under, with no account: still read, so that a token revoked by an
 * instance of an earlier version (on a shared store, through a rolling upgrade) stays refused until it expires.
 */
function legacyRevokedJtiKey(jti: string): string {
  return `revoked-jti:${jti}`;
}

/**
 * Whether a token is a delegation (RFC 8693 §4.1: it names an actor): its revocation is {@link revokeDelegatedToken}'s.
 *
 * @example if (isDelegated(claims)) await revokeDelegatedToken(context, claims);
 */
export function isDelegated(claims: Pick<AccessTokenClaims, 'act'>): boolean {
  return claims.act !== undefined;
}

/**
 * Revokes one delegated token until it expires, without touching its grant: a marker that lives until the token's
 * `exp` plus the clock tolerance twice (and a second, so the last instant a verifier could accept it is covered): a
 * verifier's clock may run behind this instance's by up to the tolerance, and it accepts the token up to its own
 * `exp` plus the tolerance.
 * @throws when the store cannot keep it (a full MemoryStore security area, a failing store): the revocation is a 500,
 *   never a 200 that did not hold.
 * @example await revokeDelegatedToken(context, claims);
 */
export async function revokeDelegatedToken(
  context: SentinelContext,
  claims: Pick<AccessTokenClaims, 'iss' | 'jti' | 'exp'>,
): Promise<void> {
  const ttlSeconds = claims.exp + 2 * context.config.clockTolerance + 1 - Math.floor(Date.now() / 1000);
  // A token past its tolerance can no longer be presented: nothing to remember.
  if (ttlSeconds <= 0) return;
  await context.store.set(revokedJtiKey(claims.iss, claims.jti), '1', ttlSeconds * 1000);
  // Read after the write, as a replay marker's epoch is: this instance then knows the epoch the marker was written
  // under, and tells a store that lost it (grantlessDelegationRevoked) from a new one.
  await markersKeptSince(context.store, context.config);
}

/**
 * Whether any of `jtis` (a delegated token's own and those it was delegated from, all of the account whose issuer is
 * `issuer`) was revoked as a delegated token, under its key or the one of earlier versions. Any value under a key
 * counts, and a store that cannot answer throws: security state fails closed.
 *
 * @example if (await anyDelegatedRevoked(context, claims.iss, [claims.jti, ...(claims.delegated_from ?? [])])) refuse();
 */
export async function anyDelegatedRevoked(context: SentinelContext, issuer: string, jtis: readonly unknown[]): Promise<boolean> {
  const keys = jtis
    .filter((jti): jti is string => typeof jti === 'string')
    .flatMap((jti) => [revokedJtiKey(issuer, jti), legacyRevokedJtiKey(jti)]);
  return (await Promise.all(keys.map((key) => context.store.get(key)))).some((value) => value !== null);
}

/**
 * Whether a delegated token that lives on no grant (a consumer's, RFC 8693) must be refused: revoked itself or
 * through a token it was delegated from, or issued before the store lost its data (src/stores/replay-epoch.ts).
 * Its markers are all there is to its revocation and nothing positive stands behind them, so a store that lost them
 * fails it closed, as a lost grant refuses a user's delegated token: the bot exchanges the consumer's token again.
 * The epoch is read after the markers, so a loss between the two reads is seen.
 *
 * @example if (typeof claims.gid !== 'string' && isDelegated(claims) && (await grantlessDelegationRevoked(context, claims))) refuse();
 */
export async function grantlessDelegationRevoked(
  context: SentinelContext,
  claims: Pick<AccessTokenClaims, 'iss' | 'jti' | 'iat' | 'delegated_from'>,
): Promise<boolean> {
  const chain = claims.delegated_from;
  if (await anyDelegatedRevoked(context, claims.iss, Array.isArray(chain) ? [claims.jti, ...chain] : [claims.jti])) return true;
  const since = await markersKeptSince(context.store, context.config);
  // Issued certainly after the loss was noticed (the issuing instance's clock within the tolerance): no marker of
  // its chain can have been lost, since a token delegated after it had to pass this check itself.
  return since !== 0 && !(claims.iat > since / 1000 + context.config.clockTolerance + 1);
}
