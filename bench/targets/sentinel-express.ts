/** sentinel-idp through its Express adapter: `app.use(toExpress(sentinel))`. */
import type { Server } from 'node:http';
import express, { type RequestHandler } from 'express';
import { HOST } from '../fixtures.js';
import { createBenchSentinel, importRepoModule, type SentinelLike } from './sentinel-common.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen } from './util.js';

export async function start(port: number): Promise<RunningTarget> {
  const { toExpress } = await importRepoModule<{ toExpress(s: SentinelLike): RequestHandler }>('adapters/express/index.js');
  const sentinel = await createBenchSentinel(port);
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(toExpress(sentinel));
  const server: Server = await listen(app, port, HOST);
  return { close: () => closeServer(server) };
}
