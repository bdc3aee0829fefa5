/**
 * The replay check of a DPoP proof (RFC 9449 §11.1): its `jti` is counted in the Store for the proof's lifetime and
 * only the first use passes, on any instance. This is a write of security state (never evicted), so it comes last:
 * after every check of the proof (proof.ts) and, at the token and PAR endpoints, after the request itself has been
 * found good — a made-up code or an invalid push writes nothing. Who can still write one is bounded:
 *
 * - at the token endpoint a marker is written only for a code or refresh token that was good, and at a resource
 *   only for a proof by the key the presented token is bound to: each stands for a credential;
 * - a push needs no credential from a public client's caller, so such pushes count against their address
 *   (`dpop.pushProofsPerAddress`, proof-quota.ts);
 * - PAR proofs live under their own prefix (`dpop-push-jti:`), so pushes, which a public client's caller can make
 *   without any credential, can never fill the area of token-endpoint and resource proofs (`dpop-jti:`). A proof is
 *   bound to its endpoint by `htu`, so the two sets could never share a `jti` anyway.
 *
 * A store that has no room for the marker (MemoryStore's `SecurityStateFullError`) refuses the request with `429`:
 * the proof cannot be used, and nothing else is affected. The key names the account first, so MemoryStore keeps
 * each account's markers in an area of their own (stores/security-state.ts): one account's callers, using a bound
 * token as fast as they like, fill only their own account's area, never refuse every other account's proofs.
 */
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { digest } from '../lib/random-secrets.js';
import { ownerDigest, type SpendOutcome, spendOnce } from '../stores/replay-epoch.js';
import { proofWindowMs, takeProofSlot, tooManyProofs } from './proof-quota.js';

/** What the replay check needs of a checked proof (a `VerifiedProof` of proof.ts, which imports this module). */
export interface ProofToRemember {
  /** The thumbprint of the proof's key. */
  jkt: string;
  /** The proof's claims; `jti` was checked to be a non-empty string. */
  claims: Record<string, unknown>;
  /** The clock tolerance the proof was checked with, when not `clockTolerance` (a fapi2 app's). */
  clockTolerance?: number | undefined;
}

/** Where and for whom a proof is used. */
export interface ProofUse {
  /**
   * Whose proof it is: the account of the token, PAR or resource request (at a resource, the token's issuer, one per
   * account). Its markers are kept in that account's area.
   */
  owner: string;
  /** The proof came with a pushed authorization request (its marker lives under `dpop-push-jti:`). */
  push?: boolean;
  /**
   * The client address of a push by a public client, counted against `dpop.pushProofsPerAddress`; absent where the
   * caller has shown a credential (a client secret or assertion, a code, a refresh token, a bound token and its
   * key), `null` when the address is unknown (then nothing is counted).
   */
  publicClientAddress?: string | null | undefined;
}

/** Whether `error` says the store has no room for security state (by name: the core may be loaded twice). */
function isStateFull(error: unknown): boolean {
  return error instanceof Error && error.name === 'SecurityStateFullError';
}

/**
 * Spends the proof's `jti`: the first use passes, a replay within the window is refused.
 * @throws OAuthError invalid_dpop_proof for a replay; temporarily_unavailable (429) when the address is over its
 * bound or the store has no room for the marker.
 * @example await rememberProof(context, proof, { owner: accountId, publicClientAddress: clientIP(context.config, request) });
 */
export async function rememberProof(context: SentinelContext, proof: ProofToRemember, use: ProofUse): Promise<void> {
  const address = use.publicClientAddress;
  if (address !== undefined && address !== null) takeProofSlot(context, address);
  const prefix = use.push === true ? 'dpop-push-jti' : 'dpop-jti';
  const id = digest(`${proof.jkt}\u0000${String(proof.claims.jti)}`);
  // Earlier versions counted the marker without the owner: read there too until what they spent has expired.
  const keys = { key: `${prefix}:${ownerDigest(use.owner)}:${id}`, earlierKey: `${prefix}:${id}` };
  const tolerance = proof.clockTolerance ?? context.config.clockTolerance;
  const windowMs = proofWindowMs(context, tolerance);
  // After a loss of the store's markers, a proof passes only when made since (stores/replay-epoch.ts): its iat was
  // checked to lie at most the tolerance ahead of its use, so a later one was never used before the loss.
  const iat = proof.claims.iat as number;
  let outcome: SpendOutcome;
  try {
    outcome = await spendOnce(context.store, context.config, keys, windowMs, (since) => iat > since + tolerance + 1);
  } catch (error) {
    if (isStateFull(error)) throw tooManyProofs(windowMs / 1000, error);
    throw error;
  }
  if (outcome === 'replayed') throw new OAuthError('invalid_dpop_proof', 'the DPoP proof was already used');
  if (outcome === 'maybe-replayed') {
    throw new OAuthError('invalid_dpop_proof', 'the DPoP proof may have been used before the service lost its replay markers');
  }
}
