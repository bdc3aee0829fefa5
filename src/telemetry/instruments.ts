/**
 * The OpenTelemetry instruments of the service, through `@opentelemetry/api` only: the host registers (or does not
 * register) an SDK; without one every instrument is the API's no-op and recording costs a function call.
 *
 * Metric names and attribute keys are pinned (docs/observability.md lists them): dashboards are built on them.
 */
import {
  type Context,
  type Counter,
  createNoopMeter,
  type Histogram,
  type Meter,
  type MeterProvider,
  metrics,
  ProxyTracerProvider,
  type Tracer,
  trace,
  type TracerProvider,
} from '@opentelemetry/api';
import { Tally } from './tally.js';
import { telemetryFailed } from './telemetry-failure.js';

/** The instrumentation scope every span and metric is reported under. */
export const INSTRUMENTATION_SCOPE = 'sentinel-idp';

/** Attribute keys used on spans and metrics. */
export const ATTR = {
  route: 'sentinel.route',
  accountId: 'sentinel.account_id',
  clientId: 'oauth.client_id',
  grantType: 'oauth.grant_type',
  error: 'oauth.error',
  status: 'http.response.status_code',
  requestId: 'sentinel.request_id',
  outcome: 'outcome',
  operation: 'operation',
  // Step-up: the level and methods of the sign-in a request completed or a user token was issued for.
  acr: 'sentinel.acr',
  amr: 'sentinel.amr',
} as const;

/**
 * The `sentinel.account_id` metric attribute of a request or event whose account is not known to exist: one series
 * for every made-up account id, whatever a caller puts in the URL.
 */
export const UNKNOWN_ACCOUNT = 'unknown';

/**
 * The pinned metrics. The four counters counted on every request or token are {@link Tally}s behind observable
 * counters (no attribute hashing per count); the store error counter, rare, is a plain counter.
 */
export interface Instruments {
  /** `sentinel.requests`: handled requests by route and status. */
  requests: Tally;
  /** `sentinel.request.duration`: seconds per handled request, by route. */
  requestDuration: Histogram;
  /** `sentinel.tokens.issued`: tokens issued, by grant type. */
  tokensIssued: Tally;
  /** `sentinel.tokens.denied`: token requests refused, by OAuth error code. */
  tokensDenied: Tally;
  /** `sentinel.logins`: sign-in attempts by outcome (success, failure, throttled). */
  logins: Tally;
  /** `sentinel.store.duration`: seconds per store call, by operation. */
  storeDuration: Histogram;
  /** `sentinel.store.errors`: store calls that failed, by operation. */
  storeErrors: Counter;
}

/** Seconds; the SDK's default buckets (0 to 10 000) suit milliseconds and would put every request in one bucket. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
/** Seconds; store calls are expected well under a millisecond locally and a few milliseconds over the network. */
const STORE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

function counter(meter: Meter, name: string, description: string, counting: boolean): Tally {
  const tally = new Tally(counting);
  meter.createObservableCounter(name, { description }).addCallback((result) => tally.observe(result));
  return tally;
}

function create(provider: MeterProvider, counting: boolean): Instruments {
  const meter = provider.getMeter(INSTRUMENTATION_SCOPE);
  return {
    requests: counter(meter, 'sentinel.requests', 'Requests handled by the service', counting),
    requestDuration: meter.createHistogram('sentinel.request.duration', {
      description: 'Duration of handled requests',
      unit: 's',
      advice: { explicitBucketBoundaries: REQUEST_BUCKETS },
    }),
    tokensIssued: counter(meter, 'sentinel.tokens.issued', 'Tokens issued', counting),
    tokensDenied: counter(meter, 'sentinel.tokens.denied', 'Token requests refused', counting),
    logins: counter(meter, 'sentinel.logins', 'Sign-in attempts', counting),
    storeDuration: meter.createHistogram('sentinel.store.duration', {
      description: 'Duration of store calls',
      unit: 's',
      advice: { explicitBucketBoundaries: STORE_BUCKETS },
    }),
    storeErrors: meter.createCounter('sentinel.store.errors', { description: 'Store calls that failed' }),
  };
}

let meterCache: { provider: MeterProvider; instruments: Instruments; active: boolean } | undefined;
let tracerCache: { provider: TracerProvider; tracer: Tracer } | undefined;

// The API hands out singletons when nothing is registered: the no-op meter is always the same object, and
// an unregistered proxy tracer provider delegates to the same no-op provider. Comparing against them is how "no
// SDK" is detected, so that the service skips its own work (timing, attribute objects, events) entirely.
const NOOP_METER = createNoopMeter();
/** What a provider that cannot make its meter is replaced by: no-op instruments. */
const NOOP_PROVIDER: MeterProvider = { getMeter: () => NOOP_METER };
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

function meterState(): NonNullable<typeof meterCache> {
  const provider = metrics.getMeterProvider();
  if (meterCache?.provider !== provider) {
    try {
      // Without a meter provider the API's no-op meter, a singleton, is handed out; tallies then count nothing (a
      // tracing-only host would otherwise accumulate counts nobody collects).
      const active = provider.getMeter(INSTRUMENTATION_SCOPE) !== NOOP_METER;
      meterCache = { provider, instruments: create(provider, active), active };
    } catch (error) {
      // A host's own MeterProvider that throws from getMeter or an instrument's creation: the service goes on
      // without metrics from it (kept, so it is not asked again on every request), as with a throwing processor.
      telemetryFailed(error);
      meterCache = { provider, instruments: create(NOOP_PROVIDER, false), active: false };
    }
  }
  return meterCache;
}

/**
 * The instruments of the meter provider registered now. Looked up per use rather than once at startup because the
 * metrics API has no proxy provider: a host that registers its SDK after creating the service must still be seen.
 */
export function instruments(): Instruments {
  return meterState().instruments;
}

/** Whether a meter provider is registered (otherwise every instrument is a no-op). */
export function metricsActive(): boolean {
  return meterState().active;
}

/** Whether a tracer provider is registered (otherwise every span is a non-recording no-op). */
export function tracingActive(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_TRACER_PROVIDER;
}

/**
 * Whether any OpenTelemetry SDK is registered: without one the service does no telemetry work at all.
 * @example if (!telemetryActive()) return dispatch(request);
 */
export function telemetryActive(): boolean {
  return metricsActive() || tracingActive();
}

/**
 * Whether a child of `parent` can be recorded: false when `parent` holds a span the sampler dropped (samplers decide
 * per trace, so its children would be dropped too, after paying for ids, attributes and a sampler call). A context
 * without a span starts a trace, which the sampler decides.
 * @example if (!parentRecording(parent)) return sign(); // no span in a dropped trace
 */
export function parentRecording(parent: Context): boolean {
  return trace.getSpan(parent)?.isRecording() ?? true;
}

/** The service's tracer (the API's proxy tracer follows a provider registered later). */
export function tracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (tracerCache?.provider !== provider) tracerCache = { provider, tracer: provider.getTracer(INSTRUMENTATION_SCOPE) };
  return tracerCache.tracer;
}
