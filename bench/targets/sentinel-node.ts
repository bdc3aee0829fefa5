/**
 * sentinel-idp's core on bare node:http: `sentinel.handle()` with a SentinelRequest built by hand (lazy body
 * reader), the SentinelResponse written back as is. What the adapters cost is the difference to this row.
 */
import { HOST } from '../fixtures.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type BenchSigning,
  createBenchSentinel,
  importRepoModule,
  type SentinelRequestLike,
  type SentinelResponseLike,
} from './sentinel-common.js';

interface NodeHelpers {
  fromNodeRequest(request: IncomingMessage, input: { url: string; parsedBody: () => unknown }): SentinelRequestLike;
  writeNodeResponse(response: ServerResponse, result: SentinelResponseLike): void;
}
import type { RunningTarget, TargetMeta } from './types.js';
import { closeServer, listen } from './util.js';

export const meta: TargetMeta = { label: 'sentinel-idp, sentinel.handle on bare node:http', kind: 'sentinel' };

export async function start(port: number): Promise<RunningTarget> {
  return startNode(port, undefined);
}

/** The node:http row with a chosen signing mode (`sentinel-node-sync` measures the main-thread mode beside it). */
export async function startNode(port: number, signing: BenchSigning): Promise<RunningTarget> {
  const sentinel = await createBenchSentinel(port, signing);
  const { fromNodeRequest, writeNodeResponse } = await importRepoModule<NodeHelpers>('adapters/node/index.js');
  const server = await listen(
    (req, res) => {
      // The adapters' shared Node translation; writing through setHeader + end(body) lets Node send one
      // Content-Length response instead of a chunked one.
      sentinel
        .handle(fromNodeRequest(req, { url: req.url ?? '/', parsedBody: () => undefined }))
        .then((response) => {
          if (response === null) {
            res.writeHead(404, { 'content-type': 'text/plain' });
            res.end('not found');
            return;
          }
          writeNodeResponse(res, response);
        })
        .catch(() => {
          res.writeHead(500);
          res.end();
        });
    },
    port,
    HOST,
  );
  return { close: () => closeServer(server) };
}
