/**
 * A per-address bound on the DPoP proofs remembered for pushes of public clients. A public client is known by its
 * client_id alone and anyone can sign proofs with a key of their own, so a valid push with a proof writes a replay
 * marker for a caller nobody has authenticated (at the token endpoint a marker needs a good code or refresh token).
 * The markers are single-use security state that must not be forgotten within their window, so what bounds them is
 * how many one address may have written: at most `dpop.pushProofsPerAddress` per proof window (a fixed window
 * started by the address's first proof), counted here before the marker is written.
 *
 * Counted in the process, not in the Store: the bound costs no store round trip and no security-state budget of its
 * own, and with several instances it holds per instance. The table keeps at most {@link MAX_ADDRESSES} addresses
 * (least recently seen go first); a flood from more addresses than that is no longer bounded per address, and then
 * what still holds is the markers' own area (`dpop-push-jti:` for PAR), whose filling answers `429`, never
 * touching throttle counters, TOTP markers or sessions.
 */
import { LRUCache } from 'lru-cache';
import type { SentinelContext } from '../http/context.js';
import { addressBucket } from '../http/client-ip.js';
import { OAuthError } from '../errors.js';

/** Addresses tracked at once: about 2 MiB of heap when full (measured, lru-cache and Node 20). */
export const MAX_ADDRESSES = 10_000;

interface Window {
  count: number;
  /** Milliseconds since the epoch when the window ends. */
  endsAt: number;
}

// Keyed by the resolved config, as the JWKS fetchers are: request-scoped contexts share it for the service's life.
const tables = new WeakMap<SentinelContext['config'], LRUCache<string, Window>>();

function tableOf(context: SentinelContext): LRUCache<string, Window> {
  let table = tables.get(context.config);
  if (table === undefined) {
    table = new LRUCache<string, Window>({ max: MAX_ADDRESSES });
    tables.set(context.config, table);
  }
  return table;
}

/**
 * The proof lifetime: how long a marker is kept, covering `iat`'s whole accepted range under `tolerance` (the
 * proof's clock tolerance: `clockTolerance`, or a fapi2 app's).
 * @example store.increment(key, proofWindowMs(context));
 */
export function proofWindowMs(context: SentinelContext, tolerance = context.config.clockTolerance): number {
  return (context.config.dpop.proofMaxAgeSeconds + 2 * tolerance + 1) * 1000;
}

/**
 * The `429` for a proof refused for lack of room, with `Retry-After` in seconds.
 * @example throw tooManyProofs(30);
 */
export function tooManyProofs(retryAfterSeconds: number, cause?: unknown): OAuthError {
  return new OAuthError('temporarily_unavailable', 'too many DPoP proofs are in use; retry later', {
    status: 429,
    headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    cause,
  });
}

/**
 * Counts one proof of a public client's push from `address` against `dpop.pushProofsPerAddress`.
 * @throws OAuthError temporarily_unavailable (429, `Retry-After` = the rest of the window) when the address is over.
 * @example takeProofSlot(context, '203.0.113.7'); // throws once the address has pushed its share this window
 */
export function takeProofSlot(context: SentinelContext, address: string, now = Date.now()): void {
  const table = tableOf(context);
  const bucket = addressBucket(address);
  const window = table.get(bucket);
  if (window === undefined || window.endsAt <= now) {
    table.set(bucket, { count: 1, endsAt: now + proofWindowMs(context) });
    return;
  }
  if (window.count >= context.config.dpop.pushProofsPerAddress) throw tooManyProofs((window.endsAt - now) / 1000);
  window.count += 1;
}
