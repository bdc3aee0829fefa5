/**
 * sentinel-idp through its fetch adapter, served from node:http. Each IncomingMessage is converted to a WHATWG
 * Request (body read fully first) and the Response is written back — the conversion a fetch runtime pays, kept
 * deliberately simple: URL from Host + path, all headers, the whole body; the Response body is read as bytes.
 */
import { HOST } from '../fixtures.js';
import { createBenchSentinel, importRepoModule, type SentinelLike } from './sentinel-common.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen, readBody } from './util.js';

type FetchHandler = (request: Request) => Promise<Response | null>;

export async function start(port: number): Promise<RunningTarget> {
  const { toFetch } = await importRepoModule<{ toFetch(s: SentinelLike): FetchHandler }>('adapters/fetch/index.js');
  const sentinel = await createBenchSentinel(port);
  const handler = toFetch(sentinel);
  const origin = `http://${HOST}:${port}`;
  const server = await listen(
    (req, res) => {
      (async () => {
        const method = req.method ?? 'GET';
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers)) {
          if (Array.isArray(value)) for (const v of value) headers.append(name, v);
          else if (value !== undefined) headers.set(name, value);
        }
        const body = method === 'GET' || method === 'HEAD' ? undefined : new Uint8Array(await readBody(req));
        const request = new Request(origin + (req.url ?? '/'), { method, headers, body });
        const response = await handler(request);
        if (response === null) {
          res.writeHead(404, { 'content-type': 'text/plain' });
          res.end('not found');
          return;
        }
        const out: Record<string, string | string[]> = {};
        response.headers.forEach((value, name) => {
          if (name !== 'set-cookie') out[name] = value;
        });
        const cookies = response.headers.getSetCookie();
        if (cookies.length > 0) out['set-cookie'] = cookies;
        const bytes = Buffer.from(await response.arrayBuffer());
        res.writeHead(response.status, out);
        res.end(bytes);
      })().catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    },
    port,
    HOST,
  );
  return { close: () => closeServer(server) };
}
