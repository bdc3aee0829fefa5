/**
 * `context.emit`: every audit event goes through {@link auditEvent} (the same fields for all), feeds the token and
 * login metrics, tells the request's span what it learned, then reaches `onEvent`.
 */
import { auditEvent } from './audit-event.js';
import type { ResolvedConfig } from './config.js';
import type { EventInput } from './events.js';
import type { SentinelRequest } from './http.js';
import { recordEventMetrics } from './telemetry/event-metrics.js';
import { requestId } from './request-id.js';
import type { RequestObservation } from './telemetry/request-span.js';

/**
 * The emitter of one request (or of none, for `completeLogin()`). A throwing `onEvent` throws here, which fails the
 * request with server_error.
 *
 * @example
 * const emit = createEmitter(config, request, observation);
 * emit({ type: 'token.revoked', accountId, clientId, tokenType: 'access_token' });
 */
export function createEmitter(
  config: Pick<ResolvedConfig, 'trustProxy' | 'onEvent' | 'telemetry'>,
  request?: SentinelRequest,
  observation?: RequestObservation,
): (input: EventInput) => void {
  const { onEvent } = config;
  const identifiers = config.telemetry.identifiersInMetrics;
  const id = observation !== undefined ? observation.requestId : request === undefined ? undefined : requestId(request);
  return (input) => {
    const event = auditEvent(input, { config, request, requestId: id });
    const annotations = recordEventMetrics(event, identifiers);
    observation?.annotate(annotations);
    onEvent?.(event);
  };
}
