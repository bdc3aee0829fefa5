/**
 * One server of the telemetry bench (bench/telemetry.ts): `node --import tsx bench/telemetry-server.ts <variant> <port>
 * <source root>`. The core on bare node:http, as the sentinel-node row of the main bench, loaded from `<source root>`
 * (this repository, or the extracted source from before telemetry existed).
 *
 * Variants: `baseline` and `no-sdk` register nothing; `sdk` and `baseline-sdk` register the OpenTelemetry SDK the
 * way a host does:
 * always-on sampling with a batch span processor (its exporter drops the batches, so what is measured is the
 * service's instrumentation plus the SDK, not a collector), and a Prometheus reader aggregating every metric.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { context, metrics } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ACCOUNT_ID, CLIENT_ID, CLIENT_SECRET, HOST, issuerFor, privateJwkFromEnv, redirectUriFor } from './fixtures.js';
import type { SentinelLike, SentinelRequestLike, SentinelResponseLike } from './targets/sentinel-common.js';
import { listen } from './targets/util.js';

interface Core {
  createSentinel(options: Record<string, unknown>): SentinelLike;
  MemoryStore: new (options?: { max?: number }) => unknown;
}
interface NodeHelpers {
  fromNodeRequest(request: IncomingMessage, input: { url: string; parsedBody: () => unknown }): SentinelRequestLike;
  writeNodeResponse(response: ServerResponse, result: SentinelResponseLike): void;
}

/** Counts what it is given and keeps nothing, so memory stays flat over a long run. */
class DroppingExporter implements SpanExporter {
  exported = 0;
  export(spans: ReadableSpan[], done: (result: { code: ExportResultCode }) => void): void {
    this.exported += spans.length;
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

const [variant, portArg, root] = process.argv.slice(2);
const port = Number(portArg);
setTimeout(() => process.exit(3), 600_000).unref();
process.on('disconnect', () => process.exit(0));

async function main(): Promise<void> {
  if (!['baseline', 'no-sdk', 'baseline-sdk', 'sdk'].includes(variant ?? '') || !Number.isInteger(port) || root === undefined) {
    throw new Error('usage: telemetry-server.ts baseline|no-sdk|baseline-sdk|sdk <port> <source root>');
  }
  if (variant === 'sdk' || variant === 'baseline-sdk') {
    const parts = process.env.BENCH_SDK_PARTS ?? 'traces,metrics';
    if (parts.includes('traces')) new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(new DroppingExporter())] }).register();
    if (parts.includes('metrics')) {
      metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new PrometheusExporter({ preventServerStart: true })] }));
    }
    // Entering a context switches on Node's async-context tracking for the whole process. The SDK does so itself at
    // its first span export (and a host's HTTP instrumentation on its first request); done here so `baseline-sdk`,
    // which never exports a span, pays what every real SDK deployment pays.
    context.with(context.active(), () => {});
  }
  const core = (await import(pathToFileURL(`${root}/src/index.ts`).href)) as Core;
  const helpers = (await import(pathToFileURL(`${root}/adapters/node/index.ts`).href)) as NodeHelpers;
  const sentinel = core.createSentinel({
    issuer: issuerFor(port),
    apps: [
      {
        accountId: ACCOUNT_ID,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        redirectUris: [redirectUriFor(port)],
        grantTypes: ['client_credentials'],
      },
    ],
    keys: [privateJwkFromEnv()],
    store: new core.MemoryStore({ max: 200_000 }),
  });
  await listen(
    (req, res) => {
      sentinel
        .handle(helpers.fromNodeRequest(req, { url: req.url ?? '/', parsedBody: () => undefined }))
        .then((response) => {
          if (response === null) {
            res.writeHead(404).end();
            return;
          }
          helpers.writeNodeResponse(res, response);
        })
        .catch(() => res.writeHead(500).end());
    },
    port,
    HOST,
  );
  // CPU time of the whole process (every thread) over the measured window, as the main bench measures it.
  let cpuStart: NodeJS.CpuUsage | undefined;
  process.on('message', (message: { type: string }) => {
    if (message.type === 'cpu-start') {
      cpuStart = process.cpuUsage();
      process.send?.({ type: 'cpu-started' });
    } else if (message.type === 'cpu-stop') {
      const delta = process.cpuUsage(cpuStart);
      process.send?.({ type: 'cpu', micros: delta.user + delta.system });
    }
  });
  process.send?.({ type: 'ready' });
}

main().catch((error: unknown) => {
  process.send?.({ type: 'failed', error: error instanceof Error ? error.message : String(error) });
  setTimeout(() => process.exit(2), 100);
});
