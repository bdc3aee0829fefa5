/**
 * The service's signing keys as `createSentinel()` sets them up: the configured keys, or a shared key ring
 * (`keyRotation`), or one ring per account (`keysPerAccount`). The three are exclusive ways of holding keys, so the
 * choice lives here, in one place; its configuration errors are found by `key-options.ts`, which config check shares.
 */
import type { ResolvedConfig } from '../../config.js';
import { loadKeys, type KeySet } from '../signing-keys.js';
import type { Store } from '../../stores/store.js';
import { catchRejection } from '../../lib/thenable.js';
import { AccountRings } from './per-account.js';
import { KeyRing } from './ring.js';
import { checkKeyOptions } from './key-options.js';
import { verifyWithReload, type KeyReloadingVerify } from './unknown-kid.js';

/** The keys handlers sign with, and the rings behind them when `keyRotation` is on. */
export interface ServiceKeys {
  keys: KeySet;
  ring: KeyRing | undefined;
  accountRings: AccountRings | undefined;
}

/**
 * Loads the configured keys or creates the key ring(s); the ring starts loading at once, and a failure there is
 * reported by `ready()` and retried by the first request.
 */
export function setUpKeys(config: ResolvedConfig, store: Store, warn: (message: string) => void): ServiceKeys {
  const { timings, configured } = checkKeyOptions(config);
  const reportRing = (error: unknown): void => {
    try {
      catchRejection(config.onError?.(error, { route: 'key-ring' }));
    } catch {
      // A throwing onError must not turn a background refresh into an unhandled rejection.
    }
  };
  const rotation = config.keyRotation;
  const ring = rotation === undefined || timings === undefined ? undefined : new KeyRing(rotation, store, timings, reportRing);
  const accountRings =
    config.keysPerAccount && ring !== undefined && rotation !== undefined && timings !== undefined
      ? new AccountRings(rotation, store, timings, reportRing, ring)
      : undefined;
  // Without keys, loadKeys generates temporary ones and warns that they do not outlive the process.
  const keys = ring === undefined ? (configured ?? loadKeys(undefined, warn)) : (accountRings?.keys ?? ring.keys);
  ring?.ready().catch(() => {});
  return { keys, ring, accountRings };
}

/**
 * `context.verifyWithKeyReload`: reloads the ring `keys` resolves to during the request (the account's own under
 * `keysPerAccount`), the same ring a handler just verified with; with configured keys there is nothing to reload.
 *
 * @example
 * const verifyWithKeyReload = keyReloadingVerify(serviceKeys);
 * const claims = await verifyWithKeyReload(token, () => verifyJWT(keys, token, options));
 */
export function keyReloadingVerify(serviceKeys: ServiceKeys): KeyReloadingVerify {
  const { ring, accountRings } = serviceKeys;
  return (token, verify) => verifyWithReload(accountRings?.current() ?? ring, token, verify);
}
