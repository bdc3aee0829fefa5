/**
 * The span and request metrics of one handled request: a span `sentinel <route name>` around the handler, and
 * `sentinel.requests` / `sentinel.request.duration` when it ends. Derived from the matched route alone, so every
 * route in the table is covered without per-route code.
 */
import { type Attributes, context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { SentinelRequest, SentinelResponse } from '../http.js';
import { requestId } from '../request-id.js';
import type { Route, RouteParams } from '../router.js';
import { ATTR, instruments, tracer } from './instruments.js';
import type { RequestObservation } from './request-observation.js';

/**
 * Runs `handle` inside the request's span and records the request metrics once it answers. Account and client ids
 * become metric attributes only with `identifiers` (they are always span attributes: spans are sampled, metrics are
 * aggregated per attribute set).
 *
 * @example
 * return observeRequest(route, params, request, false, (observation) => dispatch(route, request, observation));
 */
export async function observeRequest(
  route: Route,
  params: RouteParams,
  request: SentinelRequest,
  identifiers: boolean,
  handle: (observation: RequestObservation) => Promise<SentinelResponse>,
): Promise<SentinelResponse> {
  const started = performance.now();
  const active = context.active();
  // Under a host's HTTP instrumentation the active span is the server span; otherwise continue the caller's trace.
  const hostSpan = trace.getSpan(active);
  const parent = hostSpan === undefined ? propagation.extract(active, request.headers) : active;
  const span = tracer().startSpan(
    `sentinel ${route.name}`,
    { kind: hostSpan === undefined ? SpanKind.SERVER : SpanKind.INTERNAL, attributes: { [ATTR.route]: route.name } },
    parent,
  );
  const spanContext = span.spanContext();
  const id = requestId(request, span.isRecording() ? spanContext.traceId : undefined);
  if (params.accountId !== '') span.setAttribute(ATTR.accountId, params.accountId);
  if (id !== undefined && id !== spanContext.traceId) span.setAttribute(ATTR.requestId, id);
  let errorCode: string | undefined;
  let clientId: string | undefined;
  const traceContext = trace.setSpan(parent, span);
  const observation: RequestObservation = {
    span,
    traceContext,
    requestId: id,
    fail(code) {
      errorCode = code;
    },
    annotate(event) {
      if (event.clientId !== undefined && clientId === undefined) {
        clientId = event.clientId;
        span.setAttribute(ATTR.clientId, clientId);
      }
      if ('grantType' in event && event.grantType !== undefined) span.setAttribute(ATTR.grantType, event.grantType);
    },
  };
  let status = 500;
  try {
    // The span is the active context below, so spans the host's own hooks create (users, app store) nest under it.
    const response = await context.with(traceContext, () => handle(observation));
    status = response.status;
    return response;
  } finally {
    span.setAttribute(ATTR.status, status);
    if (errorCode !== undefined) span.setAttribute(ATTR.error, errorCode);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    const meters = instruments();
    const attributes: Attributes = { [ATTR.route]: route.name };
    if (identifiers) {
      if (params.accountId !== '') attributes[ATTR.accountId] = params.accountId;
      if (clientId !== undefined) attributes[ATTR.clientId] = clientId;
    }
    meters.requestDuration.record((performance.now() - started) / 1000, attributes);
    meters.requests.add(1, { ...attributes, [ATTR.status]: status });
  }
}
