/**
 * What the telemetry bench's processes share: registering the OpenTelemetry SDK as a host does, and building the
 * client-credentials sentinel from a source root (this repository, or the extracted pre-telemetry source).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { context, metrics } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import {
  ACCOUNT_ID,
  CC_BODY,
  CLIENT_ID,
  CLIENT_SECRET,
  CONSUMER_ID,
  FORM_CONTENT_TYPE,
  issuerFor,
  privateJwkFromEnv,
  redirectUriFor,
  TOKEN_PATH,
} from './fixtures.js';
import { libraryModuleURL } from './library-build.js';
import type { SentinelLike, SentinelRequestLike } from './targets/sentinel-common.js';

const repo = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
}

/**
 * The commit before telemetry (the parent of the first commit that added src/telemetry/instruments.ts, or
 * BENCH_TELEMETRY_BASE), its src and adapters extracted under .tmp/ so that it resolves this repo's node_modules.
 * @example const { ref, root } = extractTelemetryBaseline(); await buildLibraryForBench(root);
 */
export function extractTelemetryBaseline(): { ref: string; root: string } {
  const first = git('rev-list', '--reverse', 'HEAD', '--', 'src/telemetry/instruments.ts').split('\n')[0];
  const ref = process.env.BENCH_TELEMETRY_BASE ?? git('rev-parse', '--short', `${first}^`);
  const root = `${repo}/.tmp/bench-telemetry-baseline`;
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  execFileSync('sh', ['-c', `git archive ${ref} src adapters | tar -x -C ${JSON.stringify(root)}`], { cwd: repo });
  return { ref, root };
}

/** The variants of the telemetry bench. */
export const TELEMETRY_VARIANTS = ['baseline', 'no-sdk', 'baseline-sdk', 'sdk', 'sdk-ratio'] as const;
export type TelemetryVariant = (typeof TELEMETRY_VARIANTS)[number];

/** Counts what it is given and keeps nothing, so memory stays flat over a long run. */
class DroppingExporter implements SpanExporter {
  exported = 0;
  export(spans: ReadableSpan[], done: (result: { code: ExportResultCode }) => void): void {
    this.exported += spans.length;
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

/**
 * Registers the SDK for the `sdk`, `sdk-ratio` and `baseline-sdk` variants: a batch span processor whose exporter
 * drops the batches, and a Prometheus reader aggregating every metric. `sdk` and `baseline-sdk` sample every trace
 * (always on, the worst case); `sdk-ratio` samples as production hosts usually do, `ParentBased(TraceIdRatioBased(0.1))`
 * (a tenth of the traces; metrics are still recorded for every request). BENCH_SDK_PARTS (`traces,metrics`) can
 * register only one half.
 */
export function registerBenchSDK(variant: TelemetryVariant): void {
  if (variant !== 'sdk' && variant !== 'sdk-ratio' && variant !== 'baseline-sdk') return;
  const parts = process.env.BENCH_SDK_PARTS ?? 'traces,metrics';
  if (parts.includes('traces')) {
    const sampler = variant === 'sdk-ratio' ? new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.1) }) : undefined;
    new NodeTracerProvider({ sampler, spanProcessors: [new BatchSpanProcessor(new DroppingExporter())] }).register();
  }
  if (parts.includes('metrics')) {
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new PrometheusExporter({ preventServerStart: true })] }));
  }
  // Entering a context switches on Node's async-context tracking for the whole process. The SDK does so itself at
  // its first span export (and a host's HTTP instrumentation on its first request); done here so `baseline-sdk`,
  // which never exports a span, pays what every real SDK deployment pays.
  context.with(context.active(), () => {});
}

interface Core {
  createSentinel(options: Record<string, unknown>): SentinelLike;
  MemoryStore: new (options?: { max?: number }) => unknown;
}

/** One in-process client-credentials request (v2, consumer-bound), as `sentinel.handle()` takes it; new per call. */
export function ccRequest(): SentinelRequestLike {
  return {
    method: 'POST',
    path: TOKEN_PATH,
    query: new URLSearchParams({ state: CONSUMER_ID }),
    headers: { 'content-type': FORM_CONTENT_TYPE },
    body: CC_BODY,
    ip: '203.0.113.9',
  };
}

/** The client-credentials sentinel of the bench, from `root`'s build (bench/library-build.ts). */
export async function benchSentinel(root: string, port: number): Promise<SentinelLike> {
  const core = (await import(libraryModuleURL('src/index.js', root))) as Core;
  return core.createSentinel({
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
}
