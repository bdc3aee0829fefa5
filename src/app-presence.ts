/**
 * Whether the app a token was issued to still exists, for the bearer guard. Tokens are self-contained JWTs, so a
 * deleted app's tokens would otherwise pass until they expire; the guard asks the app store instead, through a
 * small positive cache (a present app is trusted for at most {@link PRESENCE_TTL_MS}). A deletion through this
 * instance forgets the app here at once; one through another instance or the CLI shows within the TTL.
 */
import { LRUCache } from 'lru-cache';
import type { SentinelContext } from './context.js';

/** How long the guard trusts that an app exists, in milliseconds: deletions reach the guard within this. */
export const PRESENCE_TTL_MS = 30_000;

/** The guard's view of which apps exist. */
export interface AppPresence {
  /** True when the app no longer exists (or never did). */
  isGone(accountId: string, clientId: string): Promise<boolean>;
  /** Drops what this instance remembers of an app (after deleting it). */
  forget(accountId: string, clientId: string): void;
}

// Keyed by the service's resolved config, not the context: handlers get a request-scoped copy of the context
// (context.ts requestContext) whenever events are observed, and a forget() through such a copy must reach the
// presence the bearer guard reads. Every copy shares the config object.
const byContext = new WeakMap<SentinelContext['config'], AppPresence>();

/** The presence check of one service instance (one per context, created on first use). */
export function appPresence(context: SentinelContext): AppPresence {
  const existing = byContext.get(context.config);
  if (existing !== undefined) return existing;
  const present = new LRUCache<string, true>({ max: 10_000, ttl: PRESENCE_TTL_MS });
  const key = (accountId: string, clientId: string): string => `${accountId}\u0000${clientId}`;
  const presence: AppPresence = {
    async isGone(accountId, clientId) {
      if (present.has(key(accountId, clientId))) return false;
      const app = await context.apps.findApp(accountId, clientId);
      if (app === null) return true;
      present.set(key(accountId, clientId), true);
      return false;
    },
    forget(accountId, clientId) {
      present.delete(key(accountId, clientId));
    },
  };
  byContext.set(context.config, presence);
  return presence;
}
