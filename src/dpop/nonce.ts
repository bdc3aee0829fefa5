/**
 * Server-provided DPoP nonces (RFC 9449 §8), stateless: a nonce is a time window and an HMAC of it, so every
 * instance that shares the signing keys issues and accepts the same nonces without touching the Store. A nonce
 * is accepted in its own window and the next one, so a client that just received one never races a rotation.
 *
 * With configured `keys` the secret is the signing key's, and a rollout of a new key reorders `keys` one instance
 * at a time (`[old, new]`, then `[new, old]`): for that while, instances sign with different keys. A nonce is
 * therefore issued under the signing key and accepted under any private key of the set, so each instance accepts
 * what the others hand out; a key dropped from the set takes its nonces with it.
 */
import { createHmac } from 'node:crypto';
import type { SentinelContext } from '../http/context.js';
import type { SigningKey } from '../keys/signing-keys.js';
import { constantTimeEqual } from '../lib/random-secrets.js';

const fromKeys = new WeakMap<SigningKey, Buffer>();
const fromRotation = new Map<string, Buffer>();

function derive(material: string): Buffer {
  return createHmac('sha256', material).update('sentinel-idp dpop nonce').digest();
}

/**
 * The HMAC secret of the nonces: shared by all instances and never published. With `keyRotation` it comes from the
 * ring's encryption key (stable across rotations, which every instance holds); otherwise from the signing key's
 * private part, cached per key so it rotates with `context.keys`. A key that signs outside the process (an
 * external signer) has no private part here: nonces then need `keyRotation`, which `resolveConfig` demands at
 * startup (the throw below is only a last guard).
 */
function secretOf(context: SentinelContext): Buffer {
  const encryptionKey = context.config.keyRotation?.encryptionKey;
  if (encryptionKey !== undefined) {
    let secret = fromRotation.get(encryptionKey);
    if (secret === undefined) {
      secret = derive(`keyRotation:${encryptionKey}`);
      fromRotation.set(encryptionKey, secret);
    }
    return secret;
  }
  const signer = context.keys.signer;
  const secret = keySecret(signer);
  if (secret === undefined) {
    throw new Error('DPoP nonces need a signing key with a private part in the process, or the keyRotation option');
  }
  return secret;
}

/** The nonce secret of one configured key, cached per key; `undefined` for a key that signs outside the process. */
function keySecret(key: SigningKey): Buffer | undefined {
  let secret = fromKeys.get(key);
  if (secret === undefined && key.privateKey !== undefined) {
    secret = derive(JSON.stringify(key.privateKey.export({ format: 'jwk' })));
    fromKeys.set(key, secret);
  }
  return secret;
}

function nonceUnder(secret: Buffer, window: number): string {
  const tag = createHmac('sha256', secret).update(String(window)).digest('base64url').slice(0, 22);
  return `${window.toString(36)}.${tag}`;
}

function nonceFor(context: SentinelContext, window: number): string {
  return nonceUnder(secretOf(context), window);
}

/** Whether `nonce` is one of `window` or the one before under `secret`. */
function issuedUnder(secret: Buffer, nonce: string, window: number): boolean {
  return constantTimeEqual(nonce, nonceUnder(secret, window)) || constantTimeEqual(nonce, nonceUnder(secret, window - 1));
}

function windowOf(context: SentinelContext, now: number): number {
  return Math.floor(now / context.config.dpop.proofMaxAgeSeconds);
}

/**
 * The nonce to hand out now (`DPoP-Nonce` header).
 * @example response.headers['dpop-nonce'] = currentNonce(context);
 */
export function currentNonce(context: SentinelContext, now = Math.floor(Date.now() / 1000)): string {
  return nonceFor(context, windowOf(context, now));
}

/**
 * True when `nonce` was issued by this service in the current or the previous window: by this instance, or by one
 * whose configured `keys` sign with another key of this instance's set.
 * @example if (!isValidNonce(context, claims.nonce)) throw useDPoPNonce(context);
 */
export function isValidNonce(context: SentinelContext, nonce: unknown, now = Math.floor(Date.now() / 1000)): boolean {
  if (typeof nonce !== 'string' || nonce.length > 64) return false;
  const window = windowOf(context, now);
  const own = secretOf(context);
  if (issuedUnder(own, nonce, window)) return true;
  // The key ring's secret is the same on every instance; configured keys may sign in another order elsewhere.
  if (context.config.keyRotation?.encryptionKey !== undefined) return false;
  for (const key of context.keys.byKid.values()) {
    const secret = keySecret(key);
    if (secret !== undefined && secret !== own && issuedUnder(secret, nonce, window)) return true;
  }
  return false;
}
