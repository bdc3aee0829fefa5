/**
 * OpenTelemetry with the SDK registered globally (in-memory exporters): every route of the table produces its span
 * and request metrics, a full set of flows produces the token, login and store metrics and the signing and store
 * child spans, and nothing secret appears in any exported name or attribute.
 */
import { type Attributes, context, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it, vi } from 'vitest';
import { MemoryStore, type SentinelEvent, type Store } from '../src/index.js';
import { ROUTES } from '../src/http/routes.js';
import { tracer } from '../src/telemetry/instruments.js';
import { Tally } from '../src/telemetry/tally.js';
import { traceStore } from '../src/telemetry/traced-store.js';
import {
  ACCOUNT_PATH,
  authorizeQuery,
  call,
  exchangeCode,
  jsonOf,
  openLogin,
  postForm,
  postLogin,
  signIn,
  startInteraction,
  useRefreshToken,
} from './helpers/direct-flow.js';
import {
  ACCOUNT,
  appTokenPath,
  baseOptions,
  CC_ONLY_SECRET,
  CLIENT_ID,
  CLIENT_SECRET,
  ccBody,
  CONSUMER_UUID,
  makeSentinel,
  OTHER_SECRET,
  PASSWORD,
  USERNAME,
} from './helpers/fixtures.js';
import { signInWithSession } from './helpers/logout-flow.js';
import { startReceiver } from './helpers/logout-receiver.js';
import { type Point, registerSuiteSDK, total } from './helpers/otel-sdk.js';
import { INITIAL_ACCESS_TOKEN, manageClient, registerClient } from './helpers/registration-client.js';

const sdk = registerSuiteSDK();

function spanNamed(name: string): ReadableSpan {
  const span = sdk.spans().find((candidate) => candidate.name === name);
  expect(
    span,
    `a span "${name}" among ${sdk
      .spans()
      .map((s) => s.name)
      .join(', ')}`,
  ).toBeDefined();
  return span as ReadableSpan;
}

function childrenOf(parent: ReadableSpan): ReadableSpan[] {
  return sdk.spans().filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId);
}

/** Every exported string: span names, attribute keys and values, event names, metric names and attributes. */
function exportedText(points: Point[]): string[] {
  const texts: string[] = [];
  for (const span of sdk.spans()) {
    texts.push(span.name, ...Object.entries(span.attributes).flatMap(([key, value]) => [key, String(value)]));
    for (const event of span.events) texts.push(event.name, ...Object.values(event.attributes ?? {}).map(String));
  }
  for (const point of points) texts.push(point.metric, ...Object.entries(point.attributes).flatMap(([key, value]) => [key, String(value)]));
  return texts;
}

describe('telemetry: every route', () => {
  it('gives each observed route of the table a span "sentinel <name>" and its request metrics', async () => {
    const sentinel = makeSentinel();
    const observed = ROUTES.filter((route) => route.observed !== false);
    expect(observed.length).toBeGreaterThanOrEqual(12);
    const statuses = new Map<string, number>();
    for (const route of observed) {
      const relative = route.path.replace('{basePath}', '/sentinel').replace('{accountId}', ACCOUNT);
      const path = route.absolute === true ? relative : `/sentinel${relative}`;
      const response = await call(sentinel, { method: route.methods[0], path });
      statuses.set(route.name, response.status);
    }
    const points = await sdk.collect();
    for (const route of observed) {
      const span = spanNamed(`sentinel ${route.name}`);
      const status = statuses.get(route.name);
      expect(span.attributes).toMatchObject({ 'sentinel.route': route.name, 'http.response.status_code': status });
      if (route.path.includes('{accountId}')) expect(span.attributes['sentinel.account_id']).toBe(ACCOUNT);
      if ((status as number) >= 400) expect(typeof span.attributes['oauth.error']).toBe('string');
      expect(total(points, 'sentinel.requests', { 'sentinel.route': route.name, 'http.response.status_code': status }), route.name).toBe(1);
      expect(total(points, 'sentinel.request.duration', { 'sentinel.route': route.name }), route.name).toBe(1);
    }
    // Account ids stay out of metric attributes unless the option allows them.
    expect(points.some((point) => 'sentinel.account_id' in point.attributes)).toBe(false);
  });

  it('keeps the health routes out of spans and metrics', async () => {
    const sentinel = makeSentinel();
    expect((await call(sentinel, { path: '/sentinel/health/live' })).status).toBe(200);
    expect((await call(sentinel, { path: '/sentinel/health/ready' })).status).toBe(200);
    expect(sdk.spans()).toEqual([]);
    expect(await sdk.collect()).toEqual([]);
  });
});

describe('telemetry: flows', () => {
  it('counts issued and denied tokens and logins, times the store, and nests store and signing spans', async () => {
    const secrets = [CLIENT_SECRET, CC_ONLY_SECRET, OTHER_SECRET, PASSWORD];
    const sentinel = makeSentinel({ throttle: { maxFailures: 2, maxFailuresPerIp: 50, windowSeconds: 900 } });

    const appToken = await postForm(sentinel, appTokenPath(CONSUMER_UUID), ccBody());
    expect(appToken.status).toBe(200);
    secrets.push(jsonOf(appToken).access_token as string);
    const refused = await postForm(sentinel, appTokenPath(CONSUMER_UUID), ccBody({ client_secret: 'not-the-secret-0001' }));
    expect(jsonOf(refused).error).toBe('invalid_client');

    const failing = await startInteraction(sentinel);
    const csrf = await openLogin(sentinel, failing.interaction);
    secrets.push(failing.interaction, csrf);
    for (const password of ['wrong-password-01', 'wrong-password-02', 'wrong-password-03']) {
      await postLogin(sentinel, failing.interaction, { csrf_token: csrf, username: USERNAME, password });
    }

    const fresh = makeSentinel();
    const signedIn = await signIn(fresh);
    secrets.push(signedIn.code, signedIn.verifier, signedIn.sessionCookie, signedIn.csrf, signedIn.interaction);
    const tokens = jsonOf(await exchangeCode(fresh, signedIn.code, signedIn.verifier));
    secrets.push(tokens.access_token as string, tokens.refresh_token as string, tokens.id_token as string);
    const rotated = await useRefreshToken(fresh, tokens.refresh_token as string);
    expect(rotated.status).toBe(200);
    secrets.push(jsonOf(rotated).access_token as string, jsonOf(rotated).refresh_token as string);
    expect((await exchangeCode(fresh, signedIn.code, signedIn.verifier)).status).toBe(400);

    const points = await sdk.collect();
    expect(total(points, 'sentinel.tokens.issued', { 'oauth.grant_type': 'client_credentials' })).toBe(1);
    expect(total(points, 'sentinel.tokens.issued', { 'oauth.grant_type': 'authorization_code' })).toBe(1);
    expect(total(points, 'sentinel.tokens.issued', { 'oauth.grant_type': 'refresh_token' })).toBe(1);
    expect(total(points, 'sentinel.tokens.denied', { 'oauth.error': 'invalid_client' })).toBe(1);
    expect(total(points, 'sentinel.tokens.denied', { 'oauth.error': 'invalid_grant' })).toBe(1);
    expect(total(points, 'sentinel.logins', { outcome: 'failure' })).toBe(2);
    expect(total(points, 'sentinel.logins', { outcome: 'throttled' })).toBe(1);
    expect(total(points, 'sentinel.logins', { outcome: 'success' })).toBe(1);
    for (const operation of ['get', 'set', 'swap', 'increment']) {
      expect(total(points, 'sentinel.store.duration', { operation }), operation).toBeGreaterThan(0);
    }
    expect(total(points, 'sentinel.store.errors')).toBe(0);

    const issued = sdk.spans().filter((span) => span.name === 'sentinel token' && span.attributes['http.response.status_code'] === 200);
    expect(issued.map((span) => span.attributes['oauth.grant_type']).sort()).toEqual(['authorization_code', 'refresh_token']);
    const exchange = issued.find((span) => span.attributes['oauth.grant_type'] === 'authorization_code') as ReadableSpan;
    expect(exchange.attributes['oauth.client_id']).toBe(CLIENT_ID);
    expect(exchange.kind, 'without a host span the service span is the server span').toBe(SpanKind.SERVER);
    const children = childrenOf(exchange).map((span) => span.name);
    expect(children).toContain('sentinel store swap');
    expect(children).toContain('sentinel sign');
    const replay = sdk.spans().find((span) => span.name === 'sentinel token' && span.attributes['http.response.status_code'] === 400);
    expect(replay?.attributes['oauth.error']).toBe('invalid_grant');

    // The secret scan over everything exported: no secret, code, token, username, JWT or 256-bit random value.
    const texts = exportedText(points);
    expect(texts.length).toBeGreaterThan(100);
    for (const text of texts) {
      for (const secret of secrets) expect(text.includes(secret), `exported "${text}" holds a secret`).toBe(false);
      expect(text.toLowerCase().includes(USERNAME), `exported "${text}" holds the username`).toBe(false);
      expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{8,}\.eyJ/);
      expect(text).not.toMatch(/(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/);
    }
  });

  it('the secret scan can fail: a planted attribute is found', () => {
    const planted = [{ metric: 'x', attributes: { leak: CLIENT_SECRET }, value: 1 }];
    expect(exportedText(planted).some((text) => text.includes(CLIENT_SECRET))).toBe(true);
  });

  it('continues the caller trace of traceparent, and ties events to it by request id', async () => {
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel({ onEvent: (event) => events.push(event) });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const response = await postForm(sentinel, appTokenPath(CONSUMER_UUID), ccBody(), {
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(response.status).toBe(200);
    const span = spanNamed('sentinel app-token-v2');
    expect(span.spanContext().traceId).toBe(traceId);
    expect(span.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(events.find((event) => event.type === 'token.issued')).toMatchObject({ requestId: traceId, outcome: 'success' });

    // A traceparent the propagator ignores (uppercase hex) starts a trace of the service's own: the events name that.
    await sdk.reset();
    events.length = 0;
    await postForm(sentinel, appTokenPath(CONSUMER_UUID), ccBody(), {
      headers: { traceparent: `00-${traceId.toUpperCase()}-00F067AA0BA902B7-01` },
    });
    const own = spanNamed('sentinel app-token-v2').spanContext().traceId;
    expect(own).not.toBe(traceId);
    expect(events.find((event) => event.type === 'token.issued')?.requestId).toBe(own);

    // Without a caller trace the span's own trace id ties them; X-Request-Id is recorded on the span.
    await sdk.reset();
    events.length = 0;
    await postForm(sentinel, appTokenPath(CONSUMER_UUID), ccBody(), { headers: { 'x-request-id': 'req-7f3a' } });
    expect(spanNamed('sentinel app-token-v2').attributes['sentinel.request_id']).toBe('req-7f3a');
    expect(events[0]?.requestId).toBe('req-7f3a');
    await sdk.reset();
    events.length = 0;
    await postForm(sentinel, appTokenPath(CONSUMER_UUID), ccBody());
    expect(events[0]?.requestId).toBe(spanNamed('sentinel app-token-v2').spanContext().traceId);
  });

  it('gives a SERVER span the HTTP attributes the conventions require: the method and the route template, never the path', async () => {
    const sentinel = makeSentinel();
    const tokenPath = appTokenPath(CONSUMER_UUID);
    expect((await postForm(sentinel, tokenPath, ccBody())).status).toBe(200);
    const span = spanNamed('sentinel app-token-v2');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/sentinel/api/v2/account/{accountId}/app/token',
    });
    // Neither the path's account nor the query's consumer (`state`) is in the route.
    expect(String(span.attributes['http.route'])).not.toContain(ACCOUNT);
    expect(JSON.stringify(span.attributes)).not.toContain(CONSUMER_UUID);
    expect(span.attributes['error.type']).toBeUndefined();

    // A method outside the conventions' list is `_OTHER`, so that made-up methods add no values.
    await sdk.reset();
    expect((await call(sentinel, { method: 'PROPFIND', path: tokenPath })).status).toBe(405);
    expect(spanNamed('sentinel app-token-v2').attributes['http.request.method']).toBe('_OTHER');

    // A server error names its status as `error.type`.
    await sdk.reset();
    const failing = new MemoryStore();
    failing.get = async () => {
      throw new Error('store down');
    };
    const broken = makeSentinel({ store: failing, onError: () => {} });
    const { code, verifier } = await signIn(sentinel);
    expect((await exchangeCode(broken, code, verifier)).status).toBe(500);
    expect(spanNamed('sentinel token').attributes).toMatchObject({ 'http.response.status_code': 500, 'error.type': '500' });
  });

  it('under a host span (HTTP instrumentation) becomes its child and the active context of the store calls', async () => {
    const sentinel = makeSentinel();
    const signedIn = await signIn(sentinel);
    await sdk.reset();
    const hostTracer = trace.getTracer('host');
    await hostTracer.startActiveSpan('POST /token', async (hostSpan) => {
      expect((await exchangeCode(sentinel, signedIn.code, signedIn.verifier)).status).toBe(200);
      hostSpan.end();
    });
    const host = spanNamed('POST /token');
    const token = spanNamed('sentinel token');
    expect(token.parentSpanContext?.spanId).toBe(host.spanContext().spanId);
    expect(token.kind).toBe(SpanKind.INTERNAL);
    // The host's server span carries the HTTP attributes; the service's own span does not repeat them.
    expect(token.attributes['http.route']).toBeUndefined();
    expect(childrenOf(token).map((span) => span.name)).toEqual(expect.arrayContaining(['sentinel store swap', 'sentinel sign']));
  });

  it('adds account and client ids to metric attributes only when telemetry.identifiersInMetrics allows it', async () => {
    const sentinel = makeSentinel({ telemetry: { identifiersInMetrics: true } });
    expect((await postForm(sentinel, appTokenPath(CONSUMER_UUID), ccBody())).status).toBe(200);
    const points = await sdk.collect();
    const ids = { 'sentinel.account_id': ACCOUNT, 'oauth.client_id': CLIENT_ID };
    expect(total(points, 'sentinel.tokens.issued', ids)).toBe(1);
    expect(total(points, 'sentinel.requests', { ...ids, 'sentinel.route': 'app-token-v2' })).toBe(1);
  });

  it('with identifiersInMetrics, names an account in metrics only once the request found it: made-up ids count as "unknown"', async () => {
    const sentinel = makeSentinel({ telemetry: { identifiersInMetrics: true } });
    // Refused without any secret: the caller picks the account id of the path.
    for (const made of ['made-up-1', 'made-up-2', 'made-up-3']) {
      const refused = await postForm(sentinel, `/sentinel/api/account/${made}/token`, ccBody());
      expect(jsonOf(refused).error).toBe('invalid_client');
    }
    // A real account refused (its app was found, the secret is wrong), then served.
    const wrongSecret = await postForm(sentinel, `${ACCOUNT_PATH}/token`, ccBody({ client_secret: 'not-the-secret-0001' }));
    expect(jsonOf(wrongSecret).error).toBe('invalid_client');
    expect((await postForm(sentinel, `${ACCOUNT_PATH}/token`, ccBody())).status).toBe(200);
    // A sign-in: the interaction was made for the account the authorization request found.
    const failing = await startInteraction(sentinel);
    const csrf = await openLogin(sentinel, failing.interaction);
    await postLogin(sentinel, failing.interaction, { csrf_token: csrf, username: USERNAME, password: 'wrong-password-01' });

    const points = await sdk.collect();
    const labels = new Set(points.map((point) => point.attributes['sentinel.account_id']).filter((id) => id !== undefined));
    expect([...labels].sort()).toEqual([ACCOUNT, 'unknown']);
    const unknown = { 'sentinel.account_id': 'unknown' };
    expect(total(points, 'sentinel.requests', { ...unknown, 'sentinel.route': 'token' })).toBe(3);
    expect(total(points, 'sentinel.request.duration', { ...unknown, 'sentinel.route': 'token' })).toBe(3);
    expect(total(points, 'sentinel.tokens.denied', unknown)).toBe(3);
    const real = { 'sentinel.account_id': ACCOUNT };
    expect(total(points, 'sentinel.requests', { ...real, 'sentinel.route': 'token' })).toBe(2);
    expect(total(points, 'sentinel.request.duration', { ...real, 'sentinel.route': 'token' })).toBe(2);
    expect(total(points, 'sentinel.tokens.denied', real)).toBe(1);
    expect(total(points, 'sentinel.tokens.issued', real)).toBe(1);
    expect(total(points, 'sentinel.logins', { ...real, outcome: 'failure' })).toBe(1);
    expect(total(points, 'sentinel.requests', { ...real, 'sentinel.route': 'login' })).toBe(2);
    expect(total(points, 'sentinel.requests', { ...real, 'sentinel.route': 'authorize' })).toBe(1);
    // An unknown account's series carries no client id either: it would be the caller's choice too.
    expect(points.some((point) => point.attributes['sentinel.account_id'] === 'unknown' && 'oauth.client_id' in point.attributes)).toBe(
      false,
    );
  });
});

describe('telemetry: ids on spans', () => {
  it('names no account of the path on a span that no account could have (too long, control characters): "unknown"', async () => {
    const sentinel = makeSentinel();
    const impossible = [`made-up-${'x'.repeat(4000)}`, 'made-up-%1B%5B2J'];
    for (const made of ['made-up-1', ...impossible]) {
      const refused = await postForm(sentinel, `/sentinel/api/account/${made}/token`, ccBody({ client_id: 'made-up-client' }));
      expect(jsonOf(refused).error).toBe('invalid_client');
    }
    expect((await postForm(sentinel, `${ACCOUNT_PATH}/token`, ccBody())).status).toBe(200);
    const spans = sdk.spans().filter((span) => span.name === 'sentinel token');
    // A made-up id that could be an account's stays (an early refusal in a real account looks the same); the others
    // are "unknown".
    expect(spans.map((span) => span.attributes['sentinel.account_id'])).toEqual(['made-up-1', 'unknown', 'unknown', ACCOUNT]);
    expect(spans[3]?.attributes['oauth.client_id']).toBe(CLIENT_ID);
  });

  it('names no client the caller made up that no client could have (too long, control characters), nor does its event', async () => {
    // The configuration endpoint (RFC 7592) names the client of a refused token in its event, also one the registry
    // does not hold: the path's segment, in an account that exists, of any length and content.
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN }, onEvent: (event) => events.push(event) });
    const info = await registerClient(sentinel);
    const impossible = [`made-up-${'x'.repeat(4000)}`, 'made-up-\r\nInjected: 1', 'made-up-\u001b[2J'];
    for (const made of ['made-up-1', ...impossible]) {
      const aimed = { ...info, registration_client_uri: info.registration_client_uri.replace(info.client_id, encodeURIComponent(made)) };
      expect((await manageClient(sentinel, 'GET', aimed, { token: 'wrong-registration-access-token' })).status).toBe(401);
    }
    expect((await manageClient(sentinel, 'GET', info, { token: 'wrong-registration-access-token' })).status).toBe(401);
    const spans = sdk.spans().filter((span) => span.name === 'sentinel client-configuration');
    expect(spans.map((span) => span.attributes['oauth.client_id'])).toEqual(['made-up-1', undefined, undefined, undefined, info.client_id]);
    expect(spans.every((span) => span.attributes['sentinel.account_id'] === ACCOUNT)).toBe(true);
    // Nor do the audit events: each refusal is recorded, naming the client only when it could be one.
    const named = events.filter((event) => event.type === 'registration.denied').map((event) => event.clientId);
    expect(named).toEqual(['made-up-1', undefined, undefined, undefined, info.client_id]);

    // Past the address's budget of wrong tokens, the throttle's event names the client the same way.
    const throttling: SentinelEvent[] = [];
    const strict = makeSentinel({
      registration: { initialAccessToken: INITIAL_ACCESS_TOKEN },
      throttle: { maxFailuresPerIp: 1 },
      onEvent: (event) => throttling.push(event),
    });
    const mine = await registerClient(strict);
    expect((await manageClient(strict, 'GET', mine, { token: 'wrong-registration-access-token' })).status).toBe(401);
    for (const made of [mine.client_id, impossible[1] as string]) {
      const aimed = { ...mine, registration_client_uri: mine.registration_client_uri.replace(mine.client_id, encodeURIComponent(made)) };
      expect((await manageClient(strict, 'GET', aimed, { token: 'wrong-registration-access-token' })).status).toBe(429);
    }
    const throttled = throttling.filter((event) => event.type === 'registration.throttled').map((event) => event.clientId);
    expect(throttled).toEqual([mine.client_id, undefined]);
  });
});

describe('telemetry: logout deliveries', () => {
  it('gives a delivery its own trace, not the span of the request that woke the loop, and nests its signing span', async () => {
    let sentinel: ReturnType<typeof makeSentinel> | undefined;
    const receiver = await startReceiver({
      issuer: `http://localhost/sentinel/api/account/${ACCOUNT}`,
      clientId: CLIENT_ID,
      jwks: () => (sentinel as ReturnType<typeof makeSentinel>).jwks(),
    });
    try {
      const base = baseOptions();
      sentinel = makeSentinel({
        apps: (base.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, backchannelLogoutUri: receiver.uri } : app)),
        clientJwks: { allowPrivateAddresses: true },
      });
      const { cookie, tokens } = await signInWithSession(sentinel);
      await sdk.reset();
      // RP-initiated logout: the request queues the delivery and wakes the loop from inside its own span.
      const ended = await call(sentinel, {
        path: `${ACCOUNT_PATH}/end_session`,
        query: new URLSearchParams({ id_token_hint: tokens.idToken }),
        headers: { cookie: `sentinel_session=${cookie}` },
      });
      expect(ended.status).toBe(200);
      await receiver.waitFor(1);
      await expect.poll(() => sdk.spans().filter((span) => span.name === 'sentinel logout-delivery').length).toBe(1);
      const request = spanNamed('sentinel end-session');
      const delivery = spanNamed('sentinel logout-delivery');
      expect(delivery.parentSpanContext).toBeUndefined();
      expect(delivery.spanContext().traceId).not.toBe(request.spanContext().traceId);
      expect(delivery.attributes).toMatchObject({ 'oauth.client_id': CLIENT_ID, outcome: 'delivered' });
      // The logout token's signature is part of the attempt.
      expect(childrenOf(delivery).map((span) => [span.name, span.attributes['sentinel.token.typ']])).toEqual([
        ['sentinel sign', 'logout+jwt'],
      ]);
    } finally {
      await sentinel?.close();
      await receiver.close();
    }
  });
});

describe('telemetry: failures', () => {
  it('counts no token as issued when onEvent throws and the request fails with 500', async () => {
    const errors: unknown[] = [];
    const sentinel = makeSentinel({
      onEvent: () => {
        throw new Error('audit sink down');
      },
      onError: (error) => errors.push(error),
    });
    const response = await postForm(sentinel, appTokenPath(CONSUMER_UUID), ccBody());
    expect(response.status).toBe(500);
    expect(jsonOf(response).access_token).toBeUndefined();
    const points = await sdk.collect();
    expect(total(points, 'sentinel.tokens.issued')).toBe(0);
    expect(total(points, 'sentinel.requests', { 'sentinel.route': 'app-token-v2', 'http.response.status_code': 500 })).toBe(1);
    expect(spanNamed('sentinel app-token-v2').attributes['oauth.error']).toBe('server_error');
    expect(errors).toHaveLength(1);
  });
});

describe('telemetry: the store decorator', () => {
  it('observes methods beyond the Store interface and keeps `this` the store', async () => {
    class ExtendedStore extends MemoryStore {
      readonly #pings: string[] = [];
      async ping(name: string): Promise<number> {
        this.#pings.push(name);
        return this.#pings.length;
      }
    }
    const store = traceStore(new ExtendedStore());
    expect(await store.ping('a')).toBe(1);
    expect(await store.ping('b')).toBe(2);
    expect(store).toBeInstanceOf(ExtendedStore);
    expect(sdk.spans().filter((span) => span.name === 'sentinel store ping')).toHaveLength(2);
    expect(total(await sdk.collect(), 'sentinel.store.duration', { operation: 'ping' })).toBe(2);
  });

  it('counts a failing store call, marks its span, and answers 500 server_error with nothing about the cause', async () => {
    const errors: unknown[] = [];
    const failing: Store = new MemoryStore();
    failing.set = async () => {
      throw new Error('store down: key grant:0123456789abcdef');
    };
    const sentinel = makeSentinel({ store: failing, onError: (error) => errors.push(error) });
    const response = await postForm(sentinel, appTokenPath(CONSUMER_UUID), ccBody());
    expect(response.status, 'client credentials store nothing, so they still succeed').toBe(200);
    // The interaction cannot be stored: the app gets server_error back at its validated redirect URI.
    const authorized = await call(sentinel, { path: `${ACCOUNT_PATH}/authorize`, query: authorizeQuery() });
    expect(authorized.status).toBe(302);
    expect(new URL(String(authorized.headers.location)).searchParams.get('error')).toBe('server_error');
    const points = await sdk.collect();
    expect(total(points, 'sentinel.store.errors', { operation: 'set' })).toBe(1);
    const storeSpan = spanNamed('sentinel store set');
    expect(storeSpan.status.code).toBe(SpanStatusCode.ERROR);
    expect(JSON.stringify(storeSpan.attributes)).not.toContain('grant:');
    const authorize = spanNamed('sentinel authorize');
    expect(authorize.attributes).toMatchObject({ 'http.response.status_code': 302, 'oauth.error': 'server_error' });
    expect(errors).toHaveLength(1);
  });
});

describe('telemetry: cost controls', () => {
  it('starts no store or signing span under a request span the sampler dropped, and still counts the request', async () => {
    const sentinel = makeSentinel();
    const signedIn = await signIn(sentinel);
    await sdk.reset();
    const started = vi.spyOn(tracer(), 'startSpan');
    try {
      // A host span of a trace the caller did not sample: the default sampler (parent-based) drops ours with it.
      const dropped = trace.wrapSpanContext({
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
        traceFlags: TraceFlags.NONE,
      });
      const response = await context.with(trace.setSpan(context.active(), dropped), () =>
        exchangeCode(sentinel, signedIn.code, signedIn.verifier),
      );
      expect(response.status).toBe(200);
      expect(started.mock.calls.map(([name]) => name)).toEqual(['sentinel token']);
      expect(sdk.spans()).toHaveLength(0);
      const points = await sdk.collect();
      expect(total(points, 'sentinel.requests', { 'sentinel.route': 'token', 'http.response.status_code': 200 })).toBe(1);
      expect(total(points, 'sentinel.tokens.issued', { 'oauth.grant_type': 'authorization_code' })).toBe(1);
      expect(total(points, 'sentinel.store.duration', { operation: 'swap' })).toBeGreaterThan(0);

      // The same flow in a sampled trace starts them (the spy sees both cases).
      started.mockClear();
      const again = await signIn(sentinel);
      await exchangeCode(sentinel, again.code, again.verifier);
      expect(started.mock.calls.map(([name]) => name)).toEqual(expect.arrayContaining(['sentinel store swap', 'sentinel sign']));
    } finally {
      started.mockRestore();
    }
  });

  it('tallies by attribute set, overflows past the cardinality limit, and counts nothing without a meter', () => {
    const observed = (tally: Tally): [number, Attributes][] => {
      const points: [number, Attributes][] = [];
      tally.observe({ observe: (value, attributes = {}) => points.push([value, attributes]) });
      return points;
    };
    const shared = Object.freeze({ 'sentinel.route': 'token' });
    const tally = new Tally(true);
    tally.add(shared);
    tally.add(shared);
    expect(observed(tally)).toEqual([[2, shared]]);

    const ids = new Tally(true);
    for (let i = 0; i < 2005; i++) ids.addKeyed(JSON.stringify(['token', `client-${i}`]), () => ({ 'oauth.client_id': `client-${i}` }));
    ids.addKeyed(JSON.stringify(['token', 'client-0']), () => ({ 'oauth.client_id': 'client-0' }));
    const points = observed(ids);
    expect(points).toHaveLength(2001);
    expect(points.find(([, attributes]) => attributes['oauth.client_id'] === 'client-0')?.[0]).toBe(2);
    expect(points.find(([, attributes]) => attributes['otel.metric.overflow'] === true)?.[0]).toBe(5);

    const idle = new Tally(false);
    idle.add(shared);
    expect(observed(idle)).toEqual([]);
  });
});
