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
import { namesClientDocument } from '../lib/client-id-shape.js';
import { catchRejection } from '../lib/thenable.js';

type EmitterConfig = Pick<ResolvedConfig, 'trustProxy' | 'onEvent' | 'onError' | 'telemetry' | 'clientIdMetadataDocuments'>;

/** The `route` an asynchronous `onEvent` failure is reported under: it belongs to the hook, not to a request. */
const ON_EVENT_ROUTE = 'onEvent';

/**
 * How an event stands to its request. `'committed'`: it reports a change the request has already made and cannot
 * undo (a spent code, a rotated refresh token, an app saved, updated, given a new secret or deleted). A throwing
 * `onEvent` then cannot veto it: failing the request would only keep from the client what it now holds nowhere else
 * (its retry would be refused, then taken for a replay that revokes its grant; a new secret would be lost), or tell
 * it that a change it made did not happen.
 *
 * `'counted'`: a refusal no one may read as an audit record (it names an account that does not exist,
 * src/http/denied-accounts.ts): counted in the metrics and the span, never given to `onEvent` or the taps, so a flood of
 * made-up ids grows no audit log and still shows in `sentinel.tokens.denied`.
 *
 * @example context.emit({ type: 'app.registered', accountId, clientId, actor }, 'committed');
 */
export type EventStanding = 'committed' | 'counted';

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
 * request with server_error, unless the event is `'committed'`. A returned promise that rejects comes too late for
 * that (the answer may be sent). Both of those go to `onError`.
 *
 * @example
 * const emit = createEmitter(config, request, observation);
 * emit({ type: 'token.revoked', accountId, clientId, tokenType: 'access_token' });
 */
export function createEmitter(
  config: EmitterConfig,
  request?: SentinelRequest,
  observation?: RequestObservation,
): (input: EventInput, standing?: EventStanding) => void {
  const { onEvent } = config;
  const identifiers = config.telemetry.identifiersInMetrics;
  const documents = config.clientIdMetadataDocuments.enabled;
  const id = observation !== undefined ? observation.requestId : request === undefined ? undefined : requestId(request);
  return (input, standing) => {
    // The hook first: when it throws, the request fails with server_error and nothing was issued, so nothing may be
    // counted as issued either. A committed change happened whatever the hook says: reported, and counted.
    const taps = standing === 'counted' ? undefined : eventTaps(config);
    const audited = standing !== 'counted' && (onEvent !== undefined || taps !== undefined);
    const event = audited ? auditEvent(input, { config, request, requestId: id }) : undefined;
    if (onEvent !== undefined && event !== undefined) {
      try {
        catchRejection(onEvent(event), (error) => reportHookFailure(config, error, event.accountId));
      } catch (error) {
        if (standing !== 'committed') throw error;
        reportHookFailure(config, error, event.accountId);
      }
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
    if (metricsActive()) {
      // A metadata document's client is anyone's to mint: counted under its account, never a series of its own.
      const counted = identifiers && input.clientId !== undefined && namesClientDocument(input.clientId, documents);
      recordEventMetrics(counted ? ({ ...input, clientId: undefined } as EventInput) : input, identifiers, observation);
    }
  };
}

/** Tells `onError` of an `onEvent` failure that fails no request; whatever `onError` does, it must not crash the host. */
function reportHookFailure(config: EmitterConfig, error: unknown, accountId: string | undefined): void {
  try {
    catchRejection(config.onError?.(error, { route: ON_EVENT_ROUTE, accountId }));
  } catch {
    // The host's reporter failed as well; there is no one left to tell.
  }
}
