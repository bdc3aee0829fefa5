/** sentinel-idp through its Koa adapter: `app.use(toKoa(sentinel))`. */
import type { Server } from 'node:http';
import Koa, { type Middleware } from 'koa';
import { HOST } from '../fixtures.js';
import { createBenchSentinel, importRepoModule, type SentinelLike } from './sentinel-common.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen } from './util.js';

export async function start(port: number): Promise<RunningTarget> {
  const { toKoa } = await importRepoModule<{ toKoa(s: SentinelLike): Middleware }>('adapters/koa/index.js');
  const sentinel = await createBenchSentinel(port);
  const app = new Koa();
  app.use(toKoa(sentinel));
  const server: Server = await listen(app.callback(), port, HOST);
  return { close: () => closeServer(server) };
}
