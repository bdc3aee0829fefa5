/**
 * The grant type a token request asked for, as the token endpoints read it, for the `token.denied` event the edge
 * builds from the request when the request is refused (src/events/denied-events.ts). Kept per request object: the
 * handler and the edge's refusal see the same one (edge.ts).
 */
import type { SentinelRequest } from './messages.js';

const REQUESTED = new WeakMap<SentinelRequest, string>();

/**
 * Notes that `request` asked for `grantType`, one the service knows (the caller's own text never is noted).
 * @example noteRequestedGrantType(request, 'refresh_token');
 */
export function noteRequestedGrantType(request: SentinelRequest, grantType: string): void {
  REQUESTED.set(request, grantType);
}

/**
 * The grant type noted for `request`: none before the endpoint read it (a body too large), or for a grant type the
 * service does not know.
 * @example requestedGrantType(request) // 'refresh_token'
 */
export function requestedGrantType(request: SentinelRequest | undefined): string | undefined {
  return request === undefined ? undefined : REQUESTED.get(request);
}
