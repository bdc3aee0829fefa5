/**
 * The span and metrics of one back-channel logout delivery attempt, made outside any request: a `sentinel
 * logout-delivery` client span (account, client, the app's status code) and the request metrics under the route
 * `logout-delivery`, so deliveries show on the same dashboards as the routes. The token is never recorded.
 *
 * The span is the root of a trace of its own, whatever context the delivery loop runs in: the loop is woken from
 * inside the request that queued a delivery, and promise callbacks keep that context, so each span was a child of
 * whichever request happened to wake the loop (an ended span of another user, or of a trace the sampler dropped,
 * which took the delivery's span with it) while the same attempt claimed by the timer, a retry or another instance
 * started a trace. The attempt runs inside the span, so the logout token's `sentinel sign` span nests under it.
 */
import { type Attributes, context, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ATTR, instruments, telemetryActive, tracer, tracingActive } from './instruments.js';
import { requestAttributes, routeAttributes } from './route-attributes.js';
import { telemetryFailed } from './telemetry-failure.js';

const ROUTE = 'logout-delivery';

/** What an attempt comes to, as far as telemetry is concerned. */
interface AttemptOutcome {
  kind: 'delivered' | 'refused' | 'retry';
  status?: number | undefined;
}

/**
 * Runs one attempt inside its span and records it; `identifiers` adds account and client to the metrics (they are
 * always on the span). The status recorded is the app's, or 0 when it gave none (timeout, unreachable).
 *
 * @example const outcome = await observeDelivery(accountId, clientId, false, () => postLogoutToken(uri, token, options));
 */
export async function observeDelivery<T extends AttemptOutcome>(
  accountId: string,
  clientId: string,
  identifiers: boolean,
  attempt: () => Promise<T>,
): Promise<T> {
  if (!telemetryActive()) return attempt();
  const started = performance.now();
  const span = tracingActive() ? startDeliverySpan(accountId, clientId) : undefined;
  let status = 0;
  let failed = true;
  let kind: AttemptOutcome['kind'] | undefined;
  try {
    const outcome = await (span === undefined ? attempt() : context.with(trace.setSpan(ROOT_CONTEXT, span), attempt));
    status = outcome.status ?? 0;
    kind = outcome.kind;
    failed = outcome.kind !== 'delivered';
    return outcome;
  } finally {
    // After the attempt: a throwing processor must not turn a delivered token into a failed job (delivered again).
    try {
      if (kind !== undefined) span?.setAttributes({ [ATTR.status]: status, [ATTR.outcome]: kind });
      if (failed) span?.setStatus({ code: SpanStatusCode.ERROR });
      span?.end();
    } catch (error) {
      telemetryFailed(error);
    }
    try {
      recordAttempt(accountId, clientId, identifiers, status, (performance.now() - started) / 1000);
    } catch (error) {
      telemetryFailed(error);
    }
  }
}

/**
 * The client span of one attempt, a root (never the span of the request that woke the loop), or none when the SDK
 * throws (a sampler or processor of the host's).
 */
function startDeliverySpan(accountId: string, clientId: string): Span | undefined {
  try {
    return tracer().startSpan(
      `sentinel ${ROUTE}`,
      { kind: SpanKind.CLIENT, attributes: { [ATTR.route]: ROUTE, [ATTR.accountId]: accountId, [ATTR.clientId]: clientId } },
      ROOT_CONTEXT,
    );
  } catch (error) {
    telemetryFailed(error);
    return undefined;
  }
}

/** `sentinel.request.duration` and `sentinel.requests` for one attempt, under the route `logout-delivery`. */
function recordAttempt(accountId: string, clientId: string, identifiers: boolean, status: number, seconds: number): void {
  const meters = instruments();
  if (identifiers) {
    const attributes: Attributes = { [ATTR.route]: ROUTE, [ATTR.accountId]: accountId, [ATTR.clientId]: clientId };
    meters.requestDuration.record(seconds, attributes);
    meters.requests.addKeyed(JSON.stringify([ROUTE, status, accountId, clientId]), () => ({ ...attributes, [ATTR.status]: status }));
  } else {
    meters.requestDuration.record(seconds, routeAttributes(ROUTE));
    meters.requests.add(requestAttributes(ROUTE, status));
  }
}
