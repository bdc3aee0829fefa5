/**
 * sentinel-idp's core on bare node:http: `sentinel.handle()` with a SentinelRequest built by hand (lazy body
 * reader), the SentinelResponse written back as is. What the adapters cost is the difference to this row.
 * Variants: `sync` signs on the main thread; `otel` registers an OpenTelemetry SDK first, as a host would (every
 * trace sampled, a batch span processor whose exporter drops the spans, a Prometheus reader aggregating every
 * metric), so the row beside the plain one is what telemetry costs at its worst.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { metrics } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { HOST } from '../fixtures.js';
import { createBenchSentinel, importRepoModule, type SentinelRequestLike, type SentinelResponseLike } from './sentinel-common.js';

interface NodeHelpers {
  fromNodeRequest(request: IncomingMessage, input: { url: string; parsedBody: () => unknown }): SentinelRequestLike;
  writeNodeResponse(response: ServerResponse, result: SentinelResponseLike): void;
}
import type { RunningTarget } from './types.js';
import { closeServer, listen } from './util.js';

function registerTelemetrySDK(): void {
  const dropping = {
    export: (_spans: unknown[], done: (r: { code: ExportResultCode }) => void) => done({ code: ExportResultCode.SUCCESS }),
    shutdown: async () => {},
  };
  new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropping)] }).register();
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new PrometheusExporter({ preventServerStart: true })] }));
}

export async function start(port: number, variant?: string): Promise<RunningTarget> {
  if (variant === 'otel') registerTelemetrySDK();
  const sentinel = await createBenchSentinel(port, variant === 'sync' ? 'sync' : undefined);
  const { fromNodeRequest, writeNodeResponse } = await importRepoModule<NodeHelpers>('adapters/node/index.js');
  const server = await listen(
    (req, res) => {
      // The adapters' shared Node translation; writing through setHeader + end(body) lets Node send one
      // Content-Length response instead of a chunked one.
      sentinel
        .handle(fromNodeRequest(req, { url: req.url ?? '/', parsedBody: () => undefined }))
        .then((response) => {
          if (response === null) {
            res.writeHead(404, { 'content-type': 'text/plain' });
            res.end('not found');
            return;
          }
          writeNodeResponse(res, response);
        })
        .catch(() => {
          res.writeHead(500);
          res.end();
        });
    },
    port,
    HOST,
  );
  return { close: () => closeServer(server) };
}
