/**
 * The OpenTelemetry SDK registered globally the way a host registers it, with in-memory exporters, so suites read
 * back exactly what the service exported: finished spans, and metric data points collected on demand.
 */
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeEach } from 'vitest';

/** One exported data point of a metric: a counter's sum or a histogram's count and sum. */
export interface Point {
  metric: string;
  attributes: Record<string, unknown>;
  /** The counter's value, or the histogram's number of samples. */
  value: number;
  /** Histograms: the sum of the samples. */
  sum?: number;
}

/** The registered SDK. */
export interface RegisteredSDK {
  /** Finished spans since the last `reset()`. */
  spans(): ReadableSpan[];
  /** Data points recorded since the last collection (delta temporality). */
  collect(): Promise<Point[]>;
  /** Forgets spans and drains pending metrics. */
  reset(): Promise<void>;
  /** Shuts the SDK down and unregisters it globally. */
  shutdown(): Promise<void>;
}

/**
 * Registers a tracer provider (async-hooks context manager, W3C propagator) and a meter provider globally.
 * @example const sdk = registerSDK(); afterAll(() => sdk.shutdown());
 */
export function registerSDK(): RegisteredSDK {
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  tracerProvider.register();
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.DELTA);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);

  async function collect(): Promise<Point[]> {
    metricExporter.reset();
    await reader.forceFlush();
    const points: Point[] = [];
    for (const resource of metricExporter.getMetrics()) {
      for (const scope of resource.scopeMetrics) {
        for (const metric of scope.metrics) {
          for (const point of metric.dataPoints as DataPoint<number | Histogram>[]) {
            const { value } = point;
            points.push(
              typeof value === 'number'
                ? { metric: metric.descriptor.name, attributes: { ...point.attributes }, value }
                : { metric: metric.descriptor.name, attributes: { ...point.attributes }, value: value.count, sum: value.sum },
            );
          }
        }
      }
    }
    return points.filter((point) => point.value > 0);
  }

  return {
    spans: () => spanExporter.getFinishedSpans(),
    collect,
    async reset() {
      spanExporter.reset();
      await collect();
    },
    async shutdown() {
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
      trace.disable();
      metrics.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** The sum of the values of a metric's points whose attributes include `attributes`. */
export function total(points: Point[], metric: string, attributes: Record<string, unknown> = {}): number {
  return points
    .filter((point) => point.metric === metric && Object.entries(attributes).every(([key, value]) => point.attributes[key] === value))
    .reduce((sum, point) => sum + point.value, 0);
}

/**
 * The SDK for one test file: registered now, emptied before each test, shut down after the file (the files that use
 * it run in a process of their own: the providers are global).
 *
 * @example const sdk = registerSuiteSDK(); it('…', async () => { expect(sdk.spans()).toHaveLength(1); });
 */
export function registerSuiteSDK(): RegisteredSDK {
  const sdk = registerSDK();
  beforeEach(() => sdk.reset());
  afterAll(() => sdk.shutdown());
  return sdk;
}
