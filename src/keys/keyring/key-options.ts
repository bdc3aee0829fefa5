/**
 * The checks of the key options (`keys`, `keyRotation`, `keysPerAccount`), apart from setting anything up, so that
 * `createSentinel()` and `sentinel-idp config check` run the same ones. Kept out of service-keys.ts, which reads the
 * resolved configuration: config/problems.ts imports this file, and the resolved configuration imports that one.
 */
import { ConfigurationError } from '../../errors.js';
import { type ExternalSigner, importConfiguredKeys, type JWK, type KeySet } from '../signing-keys.js';
import type { KeyRotationOptions } from './options.js';
import { parseEncryptionKey } from './seal.js';
import { type RingTimings, ringTimings } from './timings.js';

/** What {@link checkKeyOptions} reads: the key options, and the lifetimes and caching the ring's timings depend on. */
export interface KeyOptions {
  keys?: readonly (JWK | { signer: ExternalSigner })[] | undefined;
  keyRotation?: KeyRotationOptions | undefined;
  keysPerAccount: boolean;
  jwksMaxAge: number;
  accessTokenTtl: number;
  idTokenTtl: number;
  clockTolerance: number;
  /** Seconds an external signer has to answer (default 10). */
  signingTimeout?: number | undefined;
}

/** The key options checked: the ring's timings with `keyRotation`, else the configured keys, imported (if any). */
export interface CheckedKeyOptions {
  timings: RingTimings | undefined;
  configured: KeySet | undefined;
}

/**
 * Every check of the key options, creating nothing: `keys` empty, `keys` and `keyRotation` both, `keysPerAccount` without a ring,
 * the ring's timings and encryption key, each configured key. `setUpKeys` (service-keys.ts) runs it at startup and
 * `sentinel-idp config check` (config/problems.ts) reports it: the command refuses every key option the service does.
 * @throws ConfigurationError naming the first wrong field.
 * @example const { timings } = checkKeyOptions(config);
 */
export function checkKeyOptions(config: KeyOptions): CheckedKeyOptions {
  // An empty list is what a secret that failed to load gives (`JSON.parse(process.env.KEYS ?? '[]')`): taken for no
  // keys, each instance would sign with temporary keys of its own and its tokens would fail on the others.
  if (config.keys !== undefined && config.keys.length === 0) {
    throw new ConfigurationError('keys', 'is empty: give at least one private JWK, or leave keys out for temporary development keys');
  }
  if (config.keyRotation !== undefined && config.keys !== undefined) {
    throw new ConfigurationError('keys', 'give keys or keyRotation, not both (the ring generates its own keys)');
  }
  const rotation = config.keyRotation;
  if (rotation === undefined) {
    if (config.keysPerAccount) throw new ConfigurationError('keysPerAccount', 'needs keyRotation: each account gets its own key ring');
    return {
      timings: undefined,
      configured: config.keys === undefined ? undefined : importConfiguredKeys(config.keys, config.signingTimeout),
    };
  }
  const timings = ringTimings(rotation, config);
  parseEncryptionKey(rotation.encryptionKey);
  return { timings, configured: undefined };
}
