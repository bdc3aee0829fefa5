/**
 * `context.emit`: every audit event goes through {@link auditEvent} (the same fields for all) on its way to
 * `onEvent`, and feeds the token and login metrics and the request's span.
 */
import { auditEvent } from './audit-event.js';
import type { ResolvedConfig } from '../config.js';
import type { EventInput } from './sentinel-event.js';
import type { SentinelRequest } from '../http/messages.js';
import { requestId } from '../http/request-id.js';
import { recordEventMetrics } from '../telemetry/event-metrics.js';
import { metricsActive } from '../telemetry/instruments.js';
import type { RequestObservation } from '../telemetry/request-observation.js';

type EmitterConfig = Pick<ResolvedConfig, 'trustProxy' | 'onEvent' | 'telemetry'>;

/**
 * Whether events of a request need anyone: an `onEvent` hook, a span to annotate or metrics to count. When none
 * does, the service builds no event at all.
 *
 * @example if (!eventsWanted(config, observation)) return context; // the shared, request-free context will do
 */
export function eventsWanted(config: EmitterConfig, observation?: RequestObservation): boolean {
  return config.onEvent !== undefined || observation !== undefined || metricsActive();
}

/**
 * The emitter of one request (or of none, for `completeLogin()`). A throwing `onEvent` throws here, which fails the
 * request with server_error.
 *
 * @example
 * const emit = createEmitter(config, request, observation);
 * emit({ type: 'token.revoked', accountId, clientId, tokenType: 'access_token' });
 */
export function createEmitter(
  config: EmitterConfig,
  request?: SentinelRequest,
  observation?: RequestObservation,
): (input: EventInput) => void {
  const { onEvent } = config;
  const identifiers = config.telemetry.identifiersInMetrics;
  const id = observation !== undefined ? observation.requestId : request === undefined ? undefined : requestId(request);
  return (input) => {
    // The hook first: when it throws, the request fails with server_error and nothing was issued, so nothing may be
    // counted as issued either.
    if (onEvent !== undefined) onEvent(auditEvent(input, { config, request, requestId: id }));
    observation?.annotate(input);
    if (metricsActive()) recordEventMetrics(input, identifiers);
  };
}
