/**
 * sentinel-idp's core on bare node:http: `sentinel.handle()` with a SentinelRequest built by hand (lazy body
 * reader), the SentinelResponse written back as is. What the adapters cost is the difference to this row.
 */
import { HOST } from '../fixtures.js';
import { createBenchSentinel } from './sentinel-common.js';
import type { RunningTarget, TargetMeta } from './types.js';
import { closeServer, listen, readBody } from './util.js';

export const meta: TargetMeta = { label: 'sentinel-idp, sentinel.handle on bare node:http', kind: 'sentinel' };

export async function start(port: number): Promise<RunningTarget> {
  const sentinel = await createBenchSentinel(port);
  const server = await listen(
    (req, res) => {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      sentinel
        .handle({
          method: req.method ?? 'GET',
          path: q === -1 ? url : url.slice(0, q),
          query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)),
          headers: req.headers,
          body: () => readBody(req),
          ip: req.socket.remoteAddress,
        })
        .then(
          (response) => {
            if (response === null) {
              res.writeHead(404, { 'content-type': 'text/plain' });
              res.end('not found');
              return;
            }
            res.writeHead(response.status, response.headers);
            res.end(response.body);
          },
          () => {
            res.writeHead(500);
            res.end();
          },
        );
    },
    port,
    HOST,
  );
  return { close: () => closeServer(server) };
}
