/**
 * The span and metrics of one back-channel logout delivery attempt, made outside any request: a `sentinel
 * logout-delivery` client span (account, client, the app's status code) and the request metrics under the route
 * `logout-delivery`, so deliveries show on the same dashboards as the routes. The token is never recorded.
 */
import { type Attributes, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ATTR, instruments, telemetryActive, tracer, tracingActive } from './instruments.js';
import { requestAttributes, routeAttributes } from './route-attributes.js';

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
  const span = tracingActive()
    ? tracer().startSpan(`sentinel ${ROUTE}`, {
        kind: SpanKind.CLIENT,
        attributes: { [ATTR.route]: ROUTE, [ATTR.accountId]: accountId, [ATTR.clientId]: clientId },
      })
    : undefined;
  let status = 0;
  try {
    const outcome = await attempt();
    status = outcome.status ?? 0;
    span?.setAttributes({ [ATTR.status]: status, [ATTR.outcome]: outcome.kind });
    if (outcome.kind !== 'delivered') span?.setStatus({ code: SpanStatusCode.ERROR });
    return outcome;
  } catch (error) {
    span?.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span?.end();
    const seconds = (performance.now() - started) / 1000;
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
}
