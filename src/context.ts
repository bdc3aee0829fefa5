/**
 * What every handler needs: the resolved configuration, keys, stores and the hooks, built once by
 * `createSentinel()`.
 */
import type { AppStore } from './apps.js';
import type { ResolvedConfig } from './config.js';
import { escapeEventFields } from './event-fields.js';
import type { EventInput } from './events.js';
import type { KeySet } from './keys.js';
import type { Store } from './stores/store.js';

/** The service's collaborators, shared by all handlers. */
export interface SentinelContext {
  readonly config: ResolvedConfig;
  readonly keys: KeySet;
  readonly store: Store;
  readonly apps: AppStore;
  /** Sends an audit event to `onEvent`. A throwing hook fails the request with server_error. */
  emit(event: EventInput): void;
  /** The issuer identifier of one account: `{issuer}{basePath}/api/account/{accountId}` (RFC 8414, RFC 9207). */
  accountIssuer(accountId: string): string;
  /** Absolute URL of a path under the base path, e.g. `endpointURL('/well-known/jwks')`. */
  endpointURL(path: string): string;
}

/** Builds the context; `emit` is a no-op without an `onEvent` hook. */
export function createContext(input: { config: ResolvedConfig; keys: KeySet; store: Store; apps: AppStore }): SentinelContext {
  const { config } = input;
  const onEvent = config.onEvent;
  const base = `${config.issuer}${config.basePath}`;
  return {
    ...input,
    // Fields carry decoded request values; escaped so that no one can forge log lines through them.
    emit:
      onEvent === undefined
        ? () => {}
        : (event) => onEvent(escapeEventFields({ ...event, at: Date.now() }) as Parameters<typeof onEvent>[0]),
    accountIssuer: (accountId) => `${base}/api/account/${encodeURIComponent(accountId)}`,
    endpointURL: (path) => `${base}${path}`,
  };
}
