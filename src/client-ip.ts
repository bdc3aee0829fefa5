/**
 * The client address used for login throttling and audit events.
 *
 * RFC 9700 §4.13: `X-Forwarded-For` is set by whoever sends the request, so it is believed only when the operator
 * says a trusted proxy sits in front (`trustProxy: true`). Otherwise the socket address the host saw is used.
 */
import type { ResolvedConfig } from './config.js';
import { headerValue, type SentinelRequest } from './http.js';

/**
 * The client's IP address, or `null` when neither the host nor a trusted proxy tells it (RFC 9700 §4.13).
 *
 * @example
 * const ip = clientIP(context.config, request) ?? 'unknown';
 */
export function clientIP(config: Pick<ResolvedConfig, 'trustProxy'>, request: SentinelRequest): string | null {
  if (config.trustProxy) {
    const forwarded = headerValue(request, 'x-forwarded-for');
    const first = forwarded?.split(',')[0]?.trim();
    if (first !== undefined && first !== '') return first;
  }
  const ip = request.ip?.trim();
  return ip === undefined || ip === '' ? null : ip;
}
