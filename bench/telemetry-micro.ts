/**
 * `node --import tsx bench/telemetry-micro.ts`: what the OpenTelemetry operations a request performs cost one by one,
 * in CPU µs per operation with the SDK registered as bench/telemetry-sdk.ts registers it (always-on sampling, batch
 * span processor, Prometheus reader). It explains the telemetry bench's totals; it writes nothing to
 * bench/RESULTS.md (docs/observability.md quotes a run). Env: BENCH_MICRO_OPS (operations per figure, default 200 000).
 */
import { type Attributes, context, metrics, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { CONSUMER_ID } from './fixtures.js';
import { registerBenchSDK } from './telemetry-sdk.js';

const OPS = Number(process.env.BENCH_MICRO_OPS ?? 200_000);
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** CPU µs per call of `operation`, after as many warm-up calls. */
function cost(operation: () => unknown): number {
  for (let i = 0; i < OPS; i++) operation();
  const start = process.cpuUsage();
  for (let i = 0; i < OPS; i++) operation();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / OPS;
}

function main(): void {
  registerBenchSDK('sdk');
  const meter = metrics.getMeter('bench');
  const counter = meter.createCounter('bench.counter');
  const histogram = meter.createHistogram('bench.histogram', { advice: { explicitBucketBoundaries: BUCKETS } });
  const tracer = trace.getTracer('bench');
  const oneKey: Attributes = Object.freeze({ 'sentinel.route': 'app-token-v2' });
  const twoKeys: Attributes = Object.freeze({ 'sentinel.route': 'app-token-v2', 'http.response.status_code': 200 });
  const parent = trace.setSpan(ROOT_CONTEXT, tracer.startSpan('parent'));
  const counts = new Map<Attributes, number>();
  // The shape of the service's context: seven collaborators; a handled request's replaces two and adds one.
  const shared = { config: {}, keys: {}, store: {}, apps: {}, emit() {}, accountIssuer: () => '', endpointURL: () => '' };
  const emit = (): void => {};
  const figures: [string, number][] = [
    ['counter.add, 1 attribute', cost(() => counter.add(1, oneKey))],
    ['counter.add, 2 attributes', cost(() => counter.add(1, twoKeys))],
    ['histogram.record, 1 attribute', cost(() => histogram.record(0.003, oneKey))],
    ['tally (map by identity) +1', cost(() => counts.set(twoKeys, (counts.get(twoKeys) ?? 0) + 1))],
    ['root span start + end', cost(() => tracer.startSpan('sentinel app-token-v2', { attributes: oneKey }, ROOT_CONTEXT).end())],
    ['child span start + end', cost(() => tracer.startSpan('sentinel sign', { attributes: oneKey }, parent).end())],
    ['context.with', cost(() => context.with(parent, () => CONSUMER_ID))],
    ['performance.now', cost(() => performance.now())],
    ['context spread, adding traceContext', cost(() => ({ ...shared, emit, traceContext: parent, store: shared.store }))],
    [
      'context listed field by field',
      cost(() => ({
        config: shared.config,
        keys: shared.keys,
        store: shared.store,
        apps: shared.apps,
        emit,
        accountIssuer: shared.accountIssuer,
        endpointURL: shared.endpointURL,
        traceContext: parent,
      })),
    ],
  ];
  for (const [name, micros] of figures) console.log(`${name.padEnd(38)} ${micros.toFixed(3)} µs`);
  process.exit(0);
}

main();
