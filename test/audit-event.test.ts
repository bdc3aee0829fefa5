/**
 * The one audit-event pattern: every event, from every route, carries the same fields (time, account, client address,
 * request id, outcome), and the client address follows `trustProxy` for token events exactly as for login events.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { auditEvent, outcomeOf } from '../src/events/audit-event.js';
import type { SentinelEvent, SentinelOptions } from '../src/index.js';
import { requestId } from '../src/http/request-id.js';
import {
  ACCOUNT_PATH,
  call,
  exchangeCode,
  postForm,
  postLogin,
  signIn,
  startInteraction,
  openLogin,
  TOKEN_PATH,
} from './helpers/direct-flow.js';
import { appTokenPath, ccBody, CLIENT_ID, CLIENT_SECRET, makeSentinel, USERNAME } from './helpers/fixtures.js';

const PROXY = '10.0.0.2';
const CLIENT = '198.51.100.23';

/** Runs a token flow and a login flow through a proxy that sets X-Forwarded-For; returns every event. */
async function eventsBehindProxy(options: Partial<SentinelOptions>): Promise<SentinelEvent[]> {
  const events: SentinelEvent[] = [];
  const sentinel = makeSentinel({ ...options, onEvent: (event) => events.push(event) });
  const forwarded = { 'x-forwarded-for': `${CLIENT}, ${PROXY}` };
  await postForm(sentinel, appTokenPath(), ccBody(), { ip: PROXY, headers: forwarded });
  await postForm(sentinel, appTokenPath(), ccBody({ client_secret: 'wrong-secret-wrong-0001' }), { ip: PROXY, headers: forwarded });
  const { interaction } = await startInteraction(sentinel);
  const csrf = await openLogin(sentinel, interaction);
  await call(sentinel, {
    method: 'POST',
    path: `${ACCOUNT_PATH}/login`,
    query: new URLSearchParams({ interaction }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...forwarded },
    body: new URLSearchParams({ csrf_token: csrf, username: USERNAME, password: 'not-the-password-01' }).toString(),
    ip: PROXY,
  });
  await postForm(
    sentinel,
    `${TOKEN_PATH}/revoke`,
    new URLSearchParams({ token: 'x'.repeat(20), client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
    {
      ip: PROXY,
      headers: forwarded,
    },
  );
  return events;
}

describe('audit events: one pattern', () => {
  it('names the forwarded client under trustProxy for token and login events alike', async () => {
    const events = await eventsBehindProxy({ trustProxy: true });
    const types = events.map((event) => event.type);
    expect(types).toEqual(expect.arrayContaining(['token.issued', 'token.denied', 'login.failed']));
    for (const event of events) {
      if (event.type === 'login.failed' || event.type.startsWith('token.')) expect(event.ip, event.type).toBe(CLIENT);
    }
  });

  it('names the socket address without trustProxy, for token and login events alike', async () => {
    const events = await eventsBehindProxy({ trustProxy: false });
    for (const event of events) {
      if (event.type === 'login.failed' || event.type.startsWith('token.')) expect(event.ip, event.type).toBe(PROXY);
    }
  });

  it('gives every event of every flow the same fields, with the outcome matching the type', async () => {
    const events: SentinelEvent[] = [];
    // retryGrace 0: the second exchange is a replay at once (code.replayed), not a refused retry.
    const sentinel = makeSentinel({ retryGrace: 0, onEvent: (event) => events.push(event) });
    const signedIn = await signIn(sentinel);
    await exchangeCode(sentinel, signedIn.code, signedIn.verifier);
    await exchangeCode(sentinel, signedIn.code, signedIn.verifier);
    await postLogin(sentinel, 'unknown-interaction', { csrf_token: 'x', username: USERNAME, password: 'p' });
    expect(events.length).toBeGreaterThanOrEqual(6);
    for (const event of events) {
      expect(Object.keys(event)).toEqual(expect.arrayContaining(['type', 'at', 'accountId', 'ip', 'requestId', 'outcome']));
      expect(event.outcome).toBe(outcomeOf(event.type));
      expect(event.ip).toBe('203.0.113.7');
    }
    expect(events.find((event) => event.type === 'code.replayed')?.outcome).toBe('failure');
    expect(events.find((event) => event.type === 'token.issued')?.outcome).toBe('success');
  });

  // SentinelEvent declares token.denied's grantType: the one the request asked for, when the service knows it.
  it('names the grant a refused token request asked for in its token.denied, never a grant type it does not know', async () => {
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel({ onEvent: (event) => events.push(event) });
    const form = (fields: Record<string, string>) =>
      postForm(sentinel, TOKEN_PATH, new URLSearchParams({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, ...fields }).toString());
    expect((await form({ grant_type: 'refresh_token', refresh_token: 'x'.repeat(40) })).status).toBe(400);
    expect((await form({ grant_type: 'made-up\nX-Injected: 1' })).status).toBe(400);
    expect((await postForm(sentinel, appTokenPath(), ccBody({ client_secret: 'wrong-secret-wrong-0001' }))).status).toBe(400);
    const denied = events.filter((event) => event.type === 'token.denied');
    expect(denied.map((event) => [event.error, event.grantType])).toEqual([
      ['invalid_grant', 'refresh_token'],
      ['unsupported_grant_type', undefined],
      ['invalid_client', 'client_credentials'],
    ]);
  });

  it('docs/observability.md gives every event type a row naming each field of its own', () => {
    const source = readFileSync('src/events/sentinel-event.ts', 'utf8');
    const union = source.slice(source.indexOf('export type SentinelEvent ='), source.indexOf('export type SentinelEventType'));
    // Each variant's own fields, `{ type: '…'; name: …; other?: … }` (acr and amr, shared, are described once).
    const variants = [...union.matchAll(/\{\s*type: '([a-z_.]+)';([^}]*)\}/g)].map(([, type, rest]) => ({
      type: type as string,
      fields: [...(rest as string).matchAll(/(\w+)\??:/g)].map((match) => match[1] as string),
    }));
    expect(variants.length).toBeGreaterThanOrEqual(32);
    const rows = readFileSync('docs/observability.md', 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('| `'));
    for (const { type, fields } of variants) {
      const row = rows.find((line) => line.split('|')[1]?.includes(`\`${type}\``));
      expect(row, type).toBeDefined();
      for (const field of fields) expect(row, `${type}.${field}`).toContain(`\`${field}`);
    }
  });

  it('builds events the same way without a request (completeLogin): no address, no request id', () => {
    const event = auditEvent(
      { type: 'login.succeeded', accountId: 'a-1', clientId: 'c-1', userId: 'u-1' },
      { config: { trustProxy: true } },
    );
    expect(event).toMatchObject({ type: 'login.succeeded', accountId: 'a-1', clientId: 'c-1', outcome: 'success', ip: undefined });
    expect(typeof event.at).toBe('number');
  });
});

describe('request id', () => {
  const base = { method: 'GET', path: '/', query: new URLSearchParams() };
  it('takes the trace id of a valid traceparent first, then a well-formed X-Request-Id, then the fallback', () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    expect(requestId({ ...base, headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01`, 'x-request-id': 'r-1' } })).toBe(traceId);
    expect(requestId({ ...base, headers: { traceparent: `00-${'0'.repeat(32)}-b7ad6b7169203331-01`, 'x-request-id': 'r-1' } })).toBe('r-1');
    expect(requestId({ ...base, headers: { traceparent: 'garbage', 'x-request-id': ['r-2', 'r-3'] } })).toBe('r-2');
    expect(requestId({ ...base, headers: { 'x-request-id': 'has spaces <script>' } }, 'fallback')).toBe('fallback');
    expect(requestId({ ...base, headers: { 'x-request-id': 'x'.repeat(129) } })).toBeUndefined();
  });

  it('takes a traceparent only as Trace Context (and the OpenTelemetry propagator) does, else the next source', () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const given = (traceparent: string) => requestId({ ...base, headers: { traceparent, 'x-request-id': 'r-1' } }, 'fallback');
    // A later version may add fields; version 00 may not.
    expect(given(`01-${traceId}-b7ad6b7169203331-01-more`)).toBe(traceId);
    expect(given(`00-${traceId}-b7ad6b7169203331-01-more`)).toBe('r-1');
    // Hex is lowercase: the propagator ignores an uppercase header and starts a trace of its own.
    expect(given(`00-${traceId.toUpperCase()}-b7ad6b7169203331-01`)).toBe('r-1');
    expect(given(`00-${traceId}-B7AD6B7169203331-01`)).toBe('r-1');
    // No parent span: an all-zero parent id, and the version ff, are invalid.
    expect(given(`00-${traceId}-${'0'.repeat(16)}-01`)).toBe('r-1');
    expect(given(`ff-${traceId}-b7ad6b7169203331-01`)).toBe('r-1');
  });

  it("the pino set-up of docs/observability.md keeps a caller's X-Request-Id exactly when the service takes it", () => {
    // The snippet promises that pino-http's req.id and the events' requestId agree: it must replace what the service
    // would pass over (a space, a second header joined with ", ", past 128 characters).
    const doc = readFileSync('docs/observability.md', 'utf8');
    const kept = /if \(typeof given !== 'string' \|\| !\/(.+?)\/\.test\(given\)\) req\.headers\['x-request-id'\] = randomUUID\(\);/.exec(
      doc,
    )?.[1];
    expect(kept, 'the snippet checks the caller id before keeping it').toBeDefined();
    const snippetKeeps = new RegExp(kept as string);
    for (const id of ['req-42', 'a.b_c:d@e+f=g', 'has space', 'r-1, r-2', 'x'.repeat(128), 'x'.repeat(129), '']) {
      const service = requestId({ ...base, headers: { 'x-request-id': id } });
      expect(snippetKeeps.test(id), id).toBe(service === id);
    }
  });
});
