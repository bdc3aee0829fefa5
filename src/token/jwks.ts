/**
 * `GET {basePath}/well-known/jwks` — the public signing keys (RFC 7517), at the platform's published path.
 */
import type { SentinelContext } from '../http/context.js';
import { cacheableJSON, type SentinelResponse } from '../http/messages.js';

/** The JWKS response; public members only (the private `d`, `p`, `q`… never leave the key set). */
export function handleJWKS(context: SentinelContext): SentinelResponse {
  return cacheableJSON(200, context.keys.jwks, context.config.jwksMaxAge);
}
