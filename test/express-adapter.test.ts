/**
 * Express-specific failure paths: an error while writing our response (e.g. headers already sent by a host
 * middleware) must reach the host's error handler through next(error), never become an unhandled rejection.
 */
import { createServer } from 'node:http';
import express from 'express';
// @ts-expect-error express4 is an npm alias of express@4 without its own type declarations
import express4Untyped from 'express4';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { requireAccessToken, toExpress } from '../adapters/express/index.js';
import { makeSentinel } from './helpers/fixtures.js';

const express4 = express4Untyped as typeof express;

describe.each([
  ['express4', express4],
  ['express5', express],
])('%s adapter', (_name, factory) => {
  function appWithHeadersAlreadySent(onHostError: (error: unknown) => void): express.Express {
    const sentinel = makeSentinel();
    const app = factory();
    app.use((_request, response, next) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('host wrote first\n');
      next();
    });
    app.use(toExpress(sentinel));
    app.get('/guarded', requireAccessToken(sentinel), (_request, response) => response.end('never'));
    app.use((error: unknown, _request: express.Request, response: express.Response, _next: express.NextFunction) => {
      onHostError(error);
      response.end();
    });
    return app;
  }

  it('a failing response write goes to the host error handler (service route and bearer guard)', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const onHostError = vi.fn();
      const server = createServer(appWithHeadersAlreadySent(onHostError));
      await request(server).get('/sentinel/well-known/jwks');
      await request(server).get('/guarded');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(onHostError).toHaveBeenCalledTimes(2);
      expect(String(onHostError.mock.calls[0]![0])).toMatch(/headers|ERR_HTTP_HEADERS_SENT/i);
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});

describe('Express body reading', () => {
  it('stops reading a chunked body (no Content-Length) at the core bodyLimit and answers 413', async () => {
    const { createServer: create } = await import('node:http');
    const { connect } = await import('node:net');
    const sentinel = makeSentinel({ bodyLimit: 1024 });
    const app = express();
    app.use(toExpress(sentinel));
    const server = create(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let text = '';
        let written = 0;
        socket.on('data', (chunk) => {
          text += chunk.toString();
          if (text.includes('\r\n\r\n')) socket.destroy();
        });
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
        socket.write(
          'POST /sentinel/api/v2/account/x/app/token HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
            'Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n',
        );
        // Keep sending 512-byte chunks; the server must answer long before 64 KiB have gone out.
        const chunk = `200\r\n${'a'.repeat(512)}\r\n`;
        const pump = (): void => {
          if (socket.destroyed || text.includes('\r\n\r\n') || written >= 65_536) return;
          written += 512;
          socket.write(chunk, () => setImmediate(pump));
        };
        pump();
      });
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
