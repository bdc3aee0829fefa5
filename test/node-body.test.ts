/**
 * The Node adapters' body reader: a body that has fully arrived is taken from the stream's buffer at once (no
 * promise, no deadline timer); one still arriving is read from the stream as it comes; both refuse more than the
 * limit. Driven over real sockets so that "arrived" means what the HTTP parser saw.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { lazyNodeBody } from '../adapters/node/index.js';
import { isBodyTooLarge } from '../src/http/form-body.js';

type Outcome = { sync: boolean; body?: string; error?: unknown };

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Starts a server that reads each request's body through lazyNodeBody after `delayMs`, and reports how. */
async function bodyServer(limit: number, delayMs: number): Promise<{ port: number; outcomes: Outcome[] }> {
  const outcomes: Outcome[] = [];
  server = createServer((request: IncomingMessage, response) => {
    setTimeout(() => {
      const read = lazyNodeBody(request, () => undefined, limit);
      let result: ReturnType<typeof read>;
      try {
        result = read();
      } catch (error) {
        outcomes.push({ sync: true, error });
        response.end('refused');
        return;
      }
      const settle = (value: unknown, sync: boolean) => {
        outcomes.push({ sync, body: Buffer.from(value as Buffer).toString() });
        response.end('ok');
      };
      if (result instanceof Promise) {
        result.then(
          (value) => settle(value, false),
          (error: unknown) => {
            outcomes.push({ sync: false, error });
            response.end('refused');
          },
        );
      } else settle(result, true);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { port: typeof address === 'object' && address !== null ? address.port : 0, outcomes };
}

/** Sends `parts` of a raw request, `gapMs` apart, and waits for the answer. */
async function send(port: number, parts: string[], gapMs = 0): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let answer = '';
  socket.on('data', (chunk: Buffer) => {
    answer += chunk.toString();
  });
  for (const [index, part] of parts.entries()) {
    if (index > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    socket.write(part);
  }
  await new Promise<void>((resolve) => {
    const done = () => (answer.includes('\r\n\r\n') ? resolve() : setTimeout(done, 5));
    done();
  });
  socket.destroy();
  return answer;
}

const FORM = 'grant_type=client_credentials&client_id=c-1';
const head = (length: number) =>
  `POST /t HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${length}\r\n\r\n`;

describe('lazyNodeBody', () => {
  it('hands over a body that came with its headers at once, without a promise', async () => {
    const { port, outcomes } = await bodyServer(16_384, 5);
    await send(port, [head(FORM.length) + FORM]);
    expect(outcomes).toEqual([{ sync: true, body: FORM }]);
  });

  it('reads a body still arriving from the stream, whole', async () => {
    const { port, outcomes } = await bodyServer(16_384, 0);
    await send(port, [head(FORM.length) + FORM.slice(0, 10), FORM.slice(10)], 200);
    expect(outcomes).toEqual([{ sync: false, body: FORM }]);
  });

  it('gives an empty body at once for a request without one', async () => {
    const { port, outcomes } = await bodyServer(16_384, 5);
    await send(port, [head(0)]);
    expect(outcomes).toEqual([{ sync: true, body: '' }]);
  });

  it('refuses an arrived chunked body over the limit, at once, as too large', async () => {
    const { port, outcomes } = await bodyServer(16, 5);
    const chunk = 'x'.repeat(40);
    await send(port, [
      `POST /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`,
    ]);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]?.sync).toBe(true);
    expect(isBodyTooLarge(outcomes[0]?.error)).toBe(true);
  });

  it('refuses a body over the limit that is still arriving, as too large', async () => {
    const { port, outcomes } = await bodyServer(16, 0);
    const chunk = 'x'.repeat(40);
    await send(
      port,
      [`POST /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`, `${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`],
      200,
    );
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]?.sync).toBe(false);
    expect(isBodyTooLarge(outcomes[0]?.error)).toBe(true);
  });
});
