/**
 * OpenTelemetry for the example servers, behind an env switch: with `SENTINEL_TELEMETRY=otel` the process registers
 * the OpenTelemetry SDK (tracer provider with async context, meter provider with a Prometheus reader) and the server
 * exposes the metrics at `GET /metrics`. Without it nothing is registered and sentinel-idp does no telemetry work.
 *
 * `OTEL_TRACES_EXPORTER=console` also prints finished spans. sentinel-idp itself depends only on
 * `@opentelemetry/api`; these SDK packages are the host's choice (here: the example's).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, ConsoleSpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/** The registered SDK, when the switch is on. */
export interface ExampleTelemetry {
  /** Answers a Prometheus scrape (text exposition format). */
  metrics(request: IncomingMessage, response: ServerResponse): void;
}

/**
 * Registers the SDK when `SENTINEL_TELEMETRY=otel`; `null` otherwise. Call it before the first request.
 * @example const telemetry = startTelemetry('express'); if (telemetry) app.get('/metrics', (req, res) => telemetry.metrics(req, res));
 */
export function startTelemetry(serviceName: string): ExampleTelemetry | null {
  if (process.env.SENTINEL_TELEMETRY !== 'otel') return null;
  const resource = resourceFromAttributes({ 'service.name': `sentinel-idp-example-${serviceName}` });
  const spanProcessors: SpanProcessor[] =
    process.env.OTEL_TRACES_EXPORTER === 'console' ? [new BatchSpanProcessor(new ConsoleSpanExporter())] : [];
  new NodeTracerProvider({ resource, spanProcessors }).register();
  // The exporter's own server stays off: the app serves /metrics on its port, next to everything else.
  const prometheus = new PrometheusExporter({ preventServerStart: true });
  metrics.setGlobalMeterProvider(new MeterProvider({ resource, readers: [prometheus] }));
  return { metrics: (request, response) => prometheus.getMetricsRequestHandler(request, response) };
}
