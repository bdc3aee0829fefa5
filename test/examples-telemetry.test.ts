/**
 * The examples with `SENTINEL_TELEMETRY=otel`: each registers the OpenTelemetry SDK and serves `GET /metrics` in the
 * Prometheus text format, where the service's pinned metrics appear once it has handled requests. Without the
 * switch there is no /metrics route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExampleStarts, type RunningExample, startExamples } from './helpers/example-process.js';

const FRAMEWORKS = ['express', 'koa', 'fastify'] as const;
const ACCOUNT = '123456';
const SEEDED_CONSUMER = '0b3f6a2e-8c1d-4e5f-9a7b-1c2d3e4f5a6b';

function bannerValue(banner: string, label: string): string {
  const found = new RegExp(`^\\s+${label}\\s+(\\S+)`, 'm').exec(banner);
  if (found?.[1] === undefined) throw new Error(`banner has no ${label}:\n${banner}`);
  return found[1];
}

// The four examples start side by side; each describe waits for its own.
let starts: ExampleStarts;
beforeAll(() => {
  starts = startExamples({
    ...Object.fromEntries(FRAMEWORKS.map((framework) => [framework, { framework, env: { SENTINEL_TELEMETRY: 'otel' } }])),
    plain: { framework: 'express' },
  });
});
afterAll(() => starts.stopAll());

describe.each(FRAMEWORKS)('examples/%s with SENTINEL_TELEMETRY=otel', (framework) => {
  let app: RunningExample | undefined;
  beforeAll(async () => {
    app = await starts.get(framework);
  });
  afterAll(() => app?.stop());

  it('exposes the pinned metrics at /metrics after a token request', async () => {
    const running = app as RunningExample;
    const banner = running.output();
    const issued = await fetch(`${running.url}/sentinel/api/v2/account/${ACCOUNT}/app/token?state=${SEEDED_CONSUMER}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: bannerValue(banner, 'client id'),
        client_secret: bannerValue(banner, 'client secret'),
      }),
    });
    expect(issued.status).toBe(200);
    const scrape = await fetch(`${running.url}/metrics`);
    expect(scrape.status).toBe(200);
    const text = await scrape.text();
    expect(text).toMatch(/^sentinel_requests_total\{[^}]*sentinel_route="app-token-v2"[^}]*http_response_status_code="200"[^}]*\} 1/m);
    expect(text).toMatch(/^sentinel_tokens_issued_total\{[^}]*oauth_grant_type="client_credentials"[^}]*\} 1/m);
    expect(text).toMatch(/^sentinel_request_duration(?:_seconds)?_count\{[^}]*sentinel_route="app-token-v2"[^}]*\} 1/m);
    // Buckets in seconds (the histogram's advice), not the SDK's millisecond-sized defaults.
    expect(text).toMatch(/^sentinel_request_duration(?:_seconds)?_bucket\{[^}]*le="0.005"\}/m);
    expect(text).not.toContain(bannerValue(banner, 'client secret'));
  });
});

describe('examples without the switch', () => {
  let app: RunningExample | undefined;
  beforeAll(async () => {
    app = await starts.get('plain');
  });
  afterAll(() => app?.stop());

  it('have no /metrics route', async () => {
    expect((await fetch(`${(app as RunningExample).url}/metrics`)).status).toBe(404);
  });
});
