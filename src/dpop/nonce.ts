/**
 * Server-provided DPoP nonces (RFC 9449 §8), stateless: a nonce is a time window and an HMAC of it, so every
 * instance that shares the signing keys issues and accepts the same nonces without touching the Store. A nonce
 * is accepted in its own window and the next one, so a client that just received one never races a rotation.
 */
import { createHmac } from 'node:crypto';
import type { SentinelContext } from '../context.js';
import { constantTimeEqual } from '../secrets.js';

const secrets = new WeakMap<SentinelContext, Buffer>();

function secretOf(context: SentinelContext): Buffer {
  let secret = secrets.get(context);
  if (secret === undefined) {
    // Derived from the signing key: shared by all instances, never published, and it rotates with the key.
    const material = context.keys.signer.privateKey.export({ format: 'jwk' }) as Record<string, unknown>;
    secret = createHmac('sha256', JSON.stringify(material)).update('sentinel-idp dpop nonce').digest();
    secrets.set(context, secret);
  }
  return secret;
}

function nonceFor(context: SentinelContext, window: number): string {
  const tag = createHmac('sha256', secretOf(context)).update(String(window)).digest('base64url').slice(0, 22);
  return `${window.toString(36)}.${tag}`;
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
 * True when `nonce` was issued by this service in the current or the previous window.
 * @example if (!isValidNonce(context, claims.nonce)) throw useDPoPNonce(context);
 */
export function isValidNonce(context: SentinelContext, nonce: unknown, now = Math.floor(Date.now() / 1000)): boolean {
  if (typeof nonce !== 'string' || nonce.length > 64) return false;
  const window = windowOf(context, now);
  return constantTimeEqual(nonce, nonceFor(context, window)) || constantTimeEqual(nonce, nonceFor(context, window - 1));
}
