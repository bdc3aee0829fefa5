/**
 * Property-based fuzzing through one adapter over real HTTP: Express 5, once with
 * `express.urlencoded({ extended: true })` before the service (so qs turns `a[]=1` and `a[x]=1` into arrays and
 * nested objects) and once with no host parser (the service reads the raw bytes). Requests are written byte for
 * byte on a socket, so invalid UTF-8, broken percent-encoding, duplicated headers and look-alike Unicode reach the
 * server exactly as an attacker would send them. Properties: as in fuzz-core, plus the host's error handler never
 * sees an error from the service (only its own body parser's 4xx refusals), and the host keeps serving.
 */
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import express from 'express';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toExpress } from '../adapters/express/index.js';
import { MemoryStore, type Sentinel, type SentinelResponse } from '../src/index.js';
import { openLogin, recordingStore, startInteraction, type RecordingStore } from './helpers/direct-flow.js';
import {
  checkOutcome,
  endpointRequest,
  fuzzSettings,
  HOSTILE_MARKUP,
  isAllowedLocation,
  type FuzzInput,
} from './helpers/fuzz-arbitraries.js';
import { makeSentinel } from './helpers/fixtures.js';
import { listen, type MountedHost } from './helpers/hosts.js';

const { seed, numRuns } = fuzzSettings('fuzz-http');

/** A body as qs would have produced it from the wire: arrays as `a[]=`, nested objects as `a[k]=`. */
function qsEncode(body: Record<string, unknown>): string {
  const parts: string[] = [];
  const add = (name: string, value: unknown): void => {
    if (value === undefined) return;
    if (Array.isArray(value)) for (const item of value) add(`${name}[]`, item);
    else if (value !== null && typeof value === 'object') for (const [key, inner] of Object.entries(value)) add(`${name}[${key}]`, inner);
    // URLSearchParams encodes lone surrogates as U+FFFD where encodeURIComponent would throw.
    else parts.push(new URLSearchParams([[name, value === null ? '' : String(value)]]).toString());
  };
  for (const [name, value] of Object.entries(body)) add(name, value);
  return parts.join('&');
}

function bodyBytes(body: FuzzInput['body']): Buffer {
  if (body === undefined || typeof body === 'function') return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body);
  return Buffer.from(qsEncode(body), 'utf8');
}

/** The request exactly as written on the wire. Header values keep their bytes; CR/LF in them are sent as spaces. */
function rawRequest(input: FuzzInput): Buffer {
  const body = bodyBytes(input.body);
  const target = `${input.path}${input.rawQuery === '' ? '' : `?${input.rawQuery}`}`;
  const lines = [`${input.method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [name, value] of Object.entries(input.headers)) {
    if (name === 'content-length') continue;
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value])
      lines.push(`${name}: ${one.replace(/[\r\n]/g, ' ')}`);
  }
  lines.push(`Content-Length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8'), body]);
}

/**
 * Sends raw bytes and parses the (first) response; the server closes the connection after it (Connection: close).
 * The client does not half-close: Node's HTTP server ends a half-closed connection before an asynchronous answer
 * (a thread-pool signature, a Redis round trip) is written, and real clients keep their side open.
 */
function exchange(url: string, bytes: Buffer): Promise<SentinelResponse> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(bytes));
    // A safety net, not a timing assertion: a request the server never answers fails with this message.
    socket.setTimeout(15_000, () => socket.destroy(new Error('no answer from the server')));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...headerLines] = text.slice(0, split === -1 ? text.length : split).split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0);
      const headers: Record<string, string | string[]> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        const previous = headers[name];
        headers[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
      }
      let body = split === -1 ? '' : text.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') {
        let decoded = '';
        for (let at = 0; ; ) {
          const end = body.indexOf('\r\n', at);
          const size = Number.parseInt(body.slice(at, end), 16);
          if (!(size > 0)) break;
          decoded += body.slice(end + 2, end + 2 + size);
          at = end + 2 + size + 2;
        }
        body = decoded;
      }
      resolve({ status, headers, body: Buffer.from(body, 'latin1').toString('utf8') });
    });
  });
}

interface Mounted {
  host: MountedHost;
  hostErrors: unknown[];
}

function mountExpress(sentinel: Sentinel, parser: boolean): Promise<Mounted> {
  const app = express();
  const hostErrors: unknown[] = [];
  if (parser) app.use(express.urlencoded({ extended: true }));
  app.get('/host/ping', (_request, response) => {
    response.type('text/plain').send('pong');
  });
  app.use(toExpress(sentinel));
  app.use((error: { status?: number }, _request: express.Request, response: express.Response, _next: express.NextFunction) => {
    hostErrors.push(error);
    response
      .status(error.status ?? 500)
      .type('text/plain')
      .send('host error handler');
  });
  return listen(createServer(app) as Server).then((host) => ({ host, hostErrors }));
}

describe('fuzzing the Express adapter over raw HTTP', () => {
  let store: RecordingStore;
  let sentinel: Sentinel;
  let login: { interaction: string; csrf: string };
  let withParser: Mounted;
  let withoutParser: Mounted;

  beforeAll(async () => {
    store = recordingStore(new MemoryStore());
    sentinel = makeSentinel({ store });
    const { interaction } = await startInteraction(sentinel);
    login = { interaction, csrf: await openLogin(sentinel, interaction) };
    [withParser, withoutParser] = await Promise.all([mountExpress(sentinel, true), mountExpress(sentinel, false)]);
  });

  afterAll(async () => {
    await Promise.all([withParser.host.close(), withoutParser.host.close()]);
  });

  it(`never a 5xx, a well-formed answer, no foreign Location, no unescaped markup, no writes when refused (seed ${seed}, ${numRuns} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        endpointRequest(() => login),
        fc.boolean(),
        async (input, parsed) => {
          const mounted = parsed ? withParser : withoutParser;
          store.reset();
          mounted.hostErrors.length = 0;
          const response = await exchange(mounted.host.url, rawRequest(input));
          expect(response.status, 'an HTTP answer').toBeGreaterThanOrEqual(200);
          // The host's error handler sees only its own body parser's refusals, never an error of the service.
          for (const error of mounted.hostErrors) {
            expect(typeof (error as { type?: unknown }).type, String(error)).toBe('string');
            expect((error as { status?: number }).status).toBeLessThan(500);
          }
          // Every answer of the service says Cache-Control: no-store; Node's parser errors and Express's 404 do not.
          const fromService = String(response.headers['cache-control'] ?? '').includes('no-store');
          if (fromService) {
            checkOutcome(response, store.writes, input);
          } else {
            // Node's parser or the host refused the request before the service saw it.
            expect(response.status).toBeLessThan(500);
            expect(store.writes).toEqual([]);
            if (response.headers.location !== undefined) expect(isAllowedLocation(String(response.headers.location))).toBe(true);
            for (const markup of HOSTILE_MARKUP) expect(response.body?.includes(markup)).toBe(false);
          }
        },
      ),
      { seed, numRuns, endOnFailure: true },
    );
    // The hosts are still serving.
    for (const mounted of [withParser, withoutParser]) expect(await (await fetch(`${mounted.host.url}/host/ping`)).text()).toBe('pong');
  });

  it('qs-style nested objects and arrays from express.urlencoded({ extended: true }) are refused as malformed, not crashed on', async () => {
    const cases = [
      'grant_type=client_credentials&client_id[x]=1&client_secret=s',
      'grant_type[]=client_credentials&grant_type[]=authorization_code',
      'grant_type[__proto__][x]=1',
      'client_id[0]=a&client_id[1]=b&grant_type=client_credentials',
    ];
    for (const body of cases) {
      store.reset();
      const response = await exchange(
        withParser.host.url,
        Buffer.from(
          `POST /sentinel/api/v2/account/le81823118/app/token?state=0b3f6a2e-8c1d-4e5f-9a7b-1c2d3e4f5a6b HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        ),
      );
      expect(response.status, body).toBe(400);
      expect(JSON.parse(response.body ?? '{}').error, body).toBe('invalid_request');
      expect(store.writes).toEqual([]);
    }
    expect(withParser.hostErrors).toEqual([]);
  });
});
