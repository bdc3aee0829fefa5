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
import { eventTaps } from './event-taps.js';
import { catchRejection } from '../lib/thenable.js';

type EmitterConfig = Pick<ResolvedConfig, 'trustProxy' | 'onEvent' | 'onError' | 'telemetry'>;

/** The `route` an asynchronous `onEvent` failure is reported under: it belongs to the hook, not to a request. */
const ON_EVENT_ROUTE = 'onEvent';

/**
 * Whether events of a request need anyone: an `onEvent` hook, a span to annotate or metrics to count. When none
 * does, the service builds no event at all.
 *
 * @example if (!eventsWanted(config, observation)) return context; // the shared, request-free context will do
 */
export function eventsWanted(config: EmitterConfig, observation?: RequestObservation): boolean {
  return config.onEvent !== undefined || observation !== undefined || metricsActive() || eventTaps(config) !== undefined;
}

/**
 * The emitter of one request (or of none, for `completeLogin()`). A throwing `onEvent` throws here, which fails the
 * request with server_error. A returned promise that rejects comes too late for that (the answer may be sent): it goes
 * to `onError`.
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
    const taps = eventTaps(config);
    const event = onEvent === undefined && taps === undefined ? undefined : auditEvent(input, { config, request, requestId: id });
    if (onEvent !== undefined && event !== undefined) {
      catchRejection(onEvent(event), (error) => reportRejection(config, error, event.accountId));
    }
    // In-process listeners (the console's buffer) after the hook, and never able to fail the request.
    if (taps !== undefined && event !== undefined) {
      for (const tap of taps) {
        try {
          tap(event);
        } catch {
          // A tap is the service's own code (a buffer push); there is nothing to tell the host.
        }
      }
    }
    observation?.annotate(input);
    if (metricsActive()) recordEventMetrics(input, identifiers);
  };
}

/** Tells `onError` of a rejected `onEvent`; whatever `onError` does, it must not crash the host either. */
function reportRejection(config: EmitterConfig, error: unknown, accountId: string | undefined): void {
  try {
    catchRejection(config.onError?.(error, { route: ON_EVENT_ROUTE, accountId }));
  } catch {
    // The host's reporter failed as well; there is no one left to tell.
  }
}
