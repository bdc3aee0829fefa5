/**
 * A broken OpenTelemetry SDK must not break the service. The host's span processors and sampler run inside the SDK's
 * `startSpan()` and `span.end()`, and their throws come out of them: each request below runs under a processor that
 * throws on every span start and end of the service (or a sampler that throws), and must answer exactly as it would
 * without telemetry, with the throws reported to the OpenTelemetry diagnostic logger and nothing else.
 */
import { type Context, context, DiagLogLevel, diag, metrics, propagation, type Span, trace } from '@opentelemetry/api';
import { type ReadableSpan, type Sampler, SamplingDecision, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { SentinelEvent } from '../src/index.js';
import { exchangeCode, jsonOf, postForm, signIn, useRefreshToken } from './helpers/direct-flow.js';
import { ACCOUNT, appTokenPath, baseOptions, CLIENT_ID, CONSUMER_UUID, ccBody, makeSentinel } from './helpers/fixtures.js';
import { signInWithSession } from './helpers/logout-flow.js';
import { startReceiver } from './helpers/logout-receiver.js';

/** A processor that throws on every span of the service (those named `prefix…`), at its start or at its end. */
class ThrowingProcessor implements SpanProcessor {
  throws = 0;
  constructor(
    private readonly at: 'start' | 'end',
    private readonly prefix = 'sentinel',
  ) {}
  onStart(span: Span, _parent: Context): void {
    if (this.at === 'start' && (span as unknown as ReadableSpan).name.startsWith(this.prefix)) this.fail();
  }
  onEnd(span: ReadableSpan): void {
    if (this.at === 'end' && span.name.startsWith(this.prefix)) this.fail();
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
  private fail(): never {
    this.throws += 1;
    throw new Error(`span processor broke at ${this.at}`);
  }
}

/** A sampler that throws for every span of the service. */
const throwingSampler: Sampler = {
  shouldSample(_context, _traceId, name) {
    if (name.startsWith('sentinel')) throw new Error('sampler broke');
    return { decision: SamplingDecision.RECORD_AND_SAMPLED };
  },
  toString: () => 'ThrowingSampler',
};

const diagnosed: unknown[][] = [];

function register(options: { processor?: SpanProcessor; sampler?: Sampler }): NodeTracerProvider {
  const provider = new NodeTracerProvider({
    spanProcessors: options.processor === undefined ? [] : [options.processor],
    ...(options.sampler === undefined ? {} : { sampler: options.sampler }),
  });
  provider.register();
  diag.setLogger(
    { error: (...args) => diagnosed.push(args), warn: () => {}, info: () => {}, debug: () => {}, verbose: () => {} },
    DiagLogLevel.ERROR,
  );
  return provider;
}

const running: { close(): Promise<void> }[] = [];

afterEach(async () => {
  for (const item of running.splice(0).reverse()) await item.close();
  diagnosed.length = 0;
  trace.disable();
  metrics.disable();
  propagation.disable();
  context.disable();
  diag.disable();
});

/** The code flow, a refresh and a consumer token: each answered as without telemetry, and nothing for onError. */
async function expectFlowsUnharmed(): Promise<void> {
  const errors: unknown[] = [];
  const sentinel = makeSentinel({ onError: (error) => errors.push(error) });
  const { code, verifier } = await signIn(sentinel);
  const exchanged = await exchangeCode(sentinel, code, verifier);
  expect(exchanged.status, String(exchanged.body)).toBe(200);
  // The code's store writes happened and were answered as done: its refresh token works (no replay revoked the grant).
  const refreshed = await useRefreshToken(sentinel, jsonOf(exchanged).refresh_token as string);
  expect(refreshed.status, String(refreshed.body)).toBe(200);
  const consumer = await postForm(sentinel, appTokenPath(CONSUMER_UUID), ccBody());
  expect(consumer.status).toBe(200);
  expect(jsonOf(consumer).access_token).toEqual(expect.any(String));
  expect(errors).toEqual([]);
}

describe('a throwing OpenTelemetry SDK', () => {
  it.each(['end', 'start'] as const)(
    'a span processor throwing at the %s of every span: requests answer as without it, diag hears it',
    async (at) => {
      const processor = new ThrowingProcessor(at);
      register({ processor });
      await expectFlowsUnharmed();
      // The processor was handed the request, store and signing spans, and every throw went to the diagnostic logger.
      expect(processor.throws).toBeGreaterThan(10);
      expect(diagnosed).toHaveLength(processor.throws);
      expect(String(diagnosed[0]?.[0])).toContain('sentinel-idp: the OpenTelemetry SDK threw');
      expect(String(diagnosed[0]?.[1])).toContain(`span processor broke at ${at}`);
    },
  );

  it("a host's MeterProvider that throws when asked for a meter: requests answer as without it, diag hears it", async () => {
    diag.setLogger(
      { error: (...args) => diagnosed.push(args), warn: () => {}, info: () => {}, debug: () => {}, verbose: () => {} },
      DiagLogLevel.ERROR,
    );
    let asked = 0;
    metrics.setGlobalMeterProvider({
      getMeter: () => {
        asked += 1;
        throw new Error('meter provider broke');
      },
    });
    await expectFlowsUnharmed();
    // Asked once, then left alone: not on every request.
    expect(asked).toBe(1);
    expect(diagnosed.map((args) => String(args[1])).join('\n')).toContain('meter provider broke');
  });

  it('a sampler that throws for every span: requests answer as without it, diag hears it', async () => {
    register({ sampler: throwingSampler });
    await expectFlowsUnharmed();
    expect(diagnosed.length).toBeGreaterThan(0);
    expect(diagnosed.map((args) => String(args[1])).join('\n')).toContain('sampler broke');
  });

  it('a span processor throwing at the end of a logout delivery: the token is delivered once and reported delivered', async () => {
    // Only the delivery's span: the sign-in and the session's end are the other tests' concern.
    const processor = new ThrowingProcessor('end', 'sentinel logout-delivery');
    register({ processor });
    const receiver = await startReceiver({
      issuer: `http://localhost/sentinel/api/account/${ACCOUNT}`,
      clientId: CLIENT_ID,
      jwks: () => sentinel.jwks(),
    });
    running.push(receiver);
    const events: SentinelEvent[] = [];
    const errors: unknown[] = [];
    const base = baseOptions();
    const sentinel = makeSentinel({
      apps: (base.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, backchannelLogoutUri: receiver.uri } : app)),
      clientJwks: { allowPrivateAddresses: true },
      onEvent: (event) => events.push(event),
      onError: (error) => errors.push(error),
    });
    running.push(sentinel);
    const { tokens } = await signInWithSession(sentinel);
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: tokens.sid })).toBe(true);
    await receiver.waitFor(1);
    // The attempt's span threw at its end: still one delivery, settled and reported as delivered at the first attempt.
    await expect
      .poll(() => events.filter((event) => event.type === 'logout.delivered'), { timeout: 10_000 })
      .toEqual([expect.objectContaining({ clientId: CLIENT_ID, attempts: 1 })]);
    expect(receiver.received).toHaveLength(1);
    expect(errors).toEqual([]);
    expect(processor.throws).toBe(1);
    expect(String(diagnosed[0]?.[1])).toContain('span processor broke at end');
  });
});
