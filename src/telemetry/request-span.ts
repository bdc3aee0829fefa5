/**
 * The span and request metrics of one handled request: a span `sentinel <route name>` around the handler, and
 * `sentinel.requests` / `sentinel.request.duration` when it ends. Derived from the matched route alone, so every
 * route in the table is covered without per-route code.
 *
 * This runs on every request of a service with an SDK registered, so it allocates little: the metric attribute sets
 * are built once per route and status (frozen, shared), the observation is one object with its methods on the
 * prototype, and without a tracer provider no span, context or propagation work is done at all.
 */
import {
  type Attributes,
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { EventInput } from '../events/sentinel-event.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { requestId } from '../http/request-id.js';
import type { Route, RouteParams } from '../http/router.js';
import { ATTR, instruments, tracer, tracingActive, UNKNOWN_ACCOUNT } from './instruments.js';
import { isAccountId } from '../lib/account-id.js';
import { couldBeClientId, namesClientDocument } from '../lib/client-id-shape.js';
import type { RequestObservation } from './request-observation.js';
import { requestAttributes, routeAttributes, serverAttributes } from './route-attributes.js';
import { telemetryFailed } from './telemetry-failure.js';

class Observation implements RequestObservation {
  errorCode: string | undefined = undefined;
  clientId: string | undefined = undefined;
  grantType: string | undefined = undefined;
  acr: string | undefined = undefined;
  amr: string[] | undefined = undefined;
  #ended = false;
  #accountKnown = false;

  constructor(
    readonly span: Span,
    readonly traceContext: Context,
    readonly requestId: string | undefined,
    private readonly route: string,
    private readonly accountId: string,
    private readonly identifiers: boolean,
    private readonly documents: boolean,
    private readonly started: number,
  ) {}

  fail(code: string): void {
    this.errorCode = code;
  }

  annotate(event: EventInput): void {
    // A refusal's event may name the client the caller wrote (src/lib/client-id-shape.ts): as for the path's account,
    // one no client could have is not recorded.
    if (event.clientId !== undefined && this.clientId === undefined && couldBeClientId(event.clientId)) this.clientId = event.clientId;
    if ('grantType' in event && event.grantType !== undefined) this.grantType = event.grantType;
    if ('acr' in event && event.acr !== undefined) {
      this.acr = event.acr;
      this.amr = event.amr;
    }
  }

  noteGrantType(grantType: string): void {
    this.grantType = grantType;
  }

  noteAccount(accountId: string): void {
    if (accountId === this.accountId) this.#accountKnown = true;
  }

  knowsAccount(accountId: string): boolean {
    return this.#accountKnown && accountId === this.accountId;
  }

  end(status: number): void {
    if (this.#ended) return;
    this.#ended = true;
    // Called once the answer is settled: a throwing span processor must not turn it into a rejection.
    try {
      if (this.span.isRecording()) finishSpan(this.span, this, this.accountId, status);
    } catch (error) {
      telemetryFailed(error);
    }
    try {
      const seconds = (performance.now() - this.started) / 1000;
      // A metadata document's client is anyone's to mint (an https URL each): counted under its account only.
      const clientId = this.clientId !== undefined && namesClientDocument(this.clientId, this.documents) ? undefined : this.clientId;
      recordRequest(this.route, this.accountId, this.#accountKnown, clientId, status, seconds, this.identifiers);
    } catch (error) {
      telemetryFailed(error);
    }
  }
}

/** Stands for the span when no tracer provider is registered (metrics only): shared, it records nothing. */
const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** The span of a request and the context holding it; without a tracer provider, none and the active context. */
function startRequestSpan(route: Route, request: SentinelRequest, tracing: boolean): { span: Span; traceContext: Context } {
  const active = context.active();
  if (!tracing) return { span: NO_SPAN, traceContext: active };
  try {
    // Under a host's HTTP instrumentation the active span is the server span; otherwise continue the caller's trace.
    const hostSpan = trace.getSpan(active);
    const parent = hostSpan === undefined ? propagation.extract(active, request.headers) : active;
    // A SERVER span carries what the HTTP conventions require of one; under the host's span, that span has it.
    const span =
      hostSpan === undefined
        ? tracer().startSpan(
            `sentinel ${route.name}`,
            { kind: SpanKind.SERVER, attributes: serverAttributes(route.name, route.template, request.method) },
            parent,
          )
        : tracer().startSpan(`sentinel ${route.name}`, { kind: SpanKind.INTERNAL, attributes: routeAttributes(route.name) }, parent);
    return { span, traceContext: trace.setSpan(parent, span) };
  } catch (error) {
    // A throwing sampler, processor or propagator: the request is handled without a span of its own.
    telemetryFailed(error);
    return { span: NO_SPAN, traceContext: active };
  }
}

/** Everything the span learnt, set in one call when the request ends (one validation pass in the SDK, not five). */
function finishSpan(span: Span, observation: Observation, accountId: string, status: number): void {
  const attributes: Attributes = { [ATTR.status]: status };
  // The path's account id is the caller's choice, of any length and content. A span names it (spans are sampled, not
  // aggregated, and an early refusal in a real account is worth seeing) when it could be an account id, or the
  // request found the account; anything else (kilobytes, control characters) is `unknown` as in the metrics, with no
  // client the caller named beside it.
  const impossible = accountId !== '' && !isAccountId(accountId) && !observation.knowsAccount(accountId);
  if (accountId !== '') attributes[ATTR.accountId] = impossible ? UNKNOWN_ACCOUNT : accountId;
  if (observation.clientId !== undefined && !impossible) attributes[ATTR.clientId] = observation.clientId;
  if (observation.grantType !== undefined) attributes[ATTR.grantType] = observation.grantType;
  if (observation.errorCode !== undefined) attributes[ATTR.error] = observation.errorCode;
  if (observation.acr !== undefined) attributes[ATTR.acr] = observation.acr;
  if (observation.amr !== undefined) attributes[ATTR.amr] = observation.amr;
  const id = observation.requestId;
  if (id !== undefined && id !== span.spanContext().traceId) attributes[ATTR.requestId] = id;
  // A server error: `error.type` the status code, as the HTTP conventions name a failed request's error.
  if (status >= 500) attributes['error.type'] = String(status);
  span.setAttributes(attributes);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/**
 * Runs `handle` inside the request's span. `handle` must end the observation with the answer's status (the edge does,
 * on every path); a handler that throws past it is ended here as a 500. Account and client ids become metric
 * attributes only with `identifiers` (they are always span attributes: spans are sampled, metrics are aggregated per
 * attribute set), and the path's account only once the handler noted that it exists (`noteAccount`); with
 * `documents` (client ID metadata documents on), a client named by an https URL never is.
 *
 * Not async and no `then` of its own: with an SDK's async-context hooks every promise costs, so the request's
 * promise is the handler's, returned as is.
 *
 * @example
 * return observeRequest(route, params, request, false, false, (observation) => dispatch(route, request, observation));
 */
export function observeRequest(
  route: Route,
  params: RouteParams,
  request: SentinelRequest,
  identifiers: boolean,
  documents: boolean,
  handle: (observation: RequestObservation) => Promise<SentinelResponse>,
): Promise<SentinelResponse> {
  const started = performance.now();
  const tracing = tracingActive();
  const { span, traceContext } = startRequestSpan(route, request, tracing);
  const id = requestId(request, span.isRecording() ? span.spanContext().traceId : undefined);
  const observation = new Observation(span, traceContext, id, route.name, params.accountId, identifiers, documents, started);
  try {
    // The span is the active context below, so spans the host's own hooks create (users, app store) nest under it;
    // also when it is not sampled, so that theirs follow its sampling decision instead of starting traces of their own.
    return tracing ? context.with(traceContext, handle, undefined, observation) : handle(observation);
  } catch (error) {
    observation.end(500);
    return Promise.reject(error);
  }
}

/** `sentinel.request.duration` and `sentinel.requests` for one answered request. */
function recordRequest(
  route: string,
  accountId: string,
  accountKnown: boolean,
  clientId: string | undefined,
  status: number,
  seconds: number,
  identifiers: boolean,
): void {
  const meters = instruments();
  if (!identifiers) {
    meters.requestDuration.record(seconds, routeAttributes(route));
    meters.requests.add(requestAttributes(route, status));
    return;
  }
  // The path's account id is the caller's choice: until the request learnt that the account exists, it counts as
  // UNKNOWN_ACCOUNT, without a client id either (one the caller named, in an account nobody checked).
  const unknown = accountId !== '' && !accountKnown;
  const account = unknown ? UNKNOWN_ACCOUNT : accountId;
  const client = unknown ? undefined : clientId;
  const attributes: Attributes = { [ATTR.route]: route };
  if (account !== '') attributes[ATTR.accountId] = account;
  if (client !== undefined) attributes[ATTR.clientId] = client;
  meters.requestDuration.record(seconds, attributes);
  meters.requests.addKeyed(JSON.stringify([route, status, account, client]), () => ({ ...attributes, [ATTR.status]: status }));
}
