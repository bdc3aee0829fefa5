/**
 * Whether the app a token was issued to still exists, for the bearer guard. Tokens are self-contained JWTs, so a
 * deleted app's tokens would otherwise pass until they expire; the guard asks the app store instead, through a
 * small positive cache (a present app is trusted for at most {@link PRESENCE_TTL_MS}). A deletion through this
 * instance forgets the app here at once; one through another instance or the CLI shows within the TTL.
 */
import { LRUCache } from 'lru-cache';
import { isBusyRefusal, isOAuthError, type OAuthError, retryShortly } from '../errors.js';
import type { SentinelContext } from '../http/context.js';

/** How long the guard trusts that an app exists, in milliseconds: deletions reach the guard within this. */
export const PRESENCE_TTL_MS = 30_000;

/** The answer while the app cannot be looked up for now (`onError` heard why from the lookup itself). */
function busyNow(): OAuthError {
  return retryShortly('the access token cannot be checked now; try again');
}

/** The guard's view of which apps exist. */
export interface AppPresence {
  /** True when the app no longer exists (or never did), or the app store refuses it (`invalid_client`). */
  isGone(accountId: string, clientId: string): Promise<boolean>;
  /** True when the app is remembered as present now, without asking the store (the guard's synchronous path). */
  isKnownPresent(accountId: string, clientId: string): boolean;
  /** Drops what this instance remembers of an app (after deleting it). */
  forget(accountId: string, clientId: string): void;
}

// Keyed by the app store, not the context: every request gets its own (request-scoped) context, and a deletion
// handled with one must be forgotten by the guard, which holds another.
const byAppStore = new WeakMap<SentinelContext['apps'], AppPresence>();

/** The presence check of one service instance (one per app store, created on first use). */
export function appPresence(context: SentinelContext): AppPresence {
  const existing = byAppStore.get(context.apps);
  if (existing !== undefined) return existing;
  const present = new LRUCache<string, true>({ max: 10_000, ttl: PRESENCE_TTL_MS, ttlResolution: 0 });
  const key = (accountId: string, clientId: string): string => `${accountId}\u0000${clientId}`;
  // Bumped by every forget(): a lookup that started before a deletion must not remember the app it found as present
  // after the deletion forgot it (it would then pass for the whole TTL on this instance).
  let forgotten = 0;
  const presence: AppPresence = {
    async isGone(accountId, clientId) {
      if (present.has(key(accountId, clientId))) return false;
      const before = forgotten;
      let app: Awaited<ReturnType<SentinelContext['apps']['findApp']>>;
      try {
        app = await context.apps.findApp(accountId, clientId);
      } catch (error) {
        // The store refusing the client (a client ID metadata document gone, unreachable or no longer valid: its
        // owner's doing) is the app being gone. Any other failure is our own store's, and the guard fails closed.
        // Every document fetch slot taken is neither: the service is busy (a flood of made-up client ids can make it
        // so), and a 401 would tell a live agent to throw its tokens away; 503 tells it to come back.
        if (isBusyRefusal(error)) throw busyNow();
        if (isOAuthError(error) && error.code === 'invalid_client') return true;
        throw error;
      }
      if (app === null) return true;
      if (before === forgotten) present.set(key(accountId, clientId), true);
      return false;
    },
    isKnownPresent(accountId, clientId) {
      return present.has(key(accountId, clientId));
    },
    forget(accountId, clientId) {
      forgotten += 1;
      present.delete(key(accountId, clientId));
    },
  };
  byAppStore.set(context.apps, presence);
  return presence;
}
