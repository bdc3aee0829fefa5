/**
 * The guard rows' fetch runtime on Node: node:http turned into a WHATWG `Request` and the handler's `Response`
 * written back, as @hono/node-server or a Next.js route does (neither is a dependency of this repository). Both fetch
 * rows, sentinel-idp's `requireAccessToken` and the hand-written jose guard, run on this same host, so their ratio
 * is the guards' own.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HOST } from '../fixtures.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen } from './util.js';

/** The guard route's parameters from a path, or undefined for any other path. */
export function guardParams(url: string): { accountId: string; consumerId: string } | undefined {
  const found = /^\/api\/account\/([^/?]+)\/consumer\/([^/?]+)\/tokens(?:\?|$)/.exec(url);
  return found === null ? undefined : { accountId: found[1] as string, consumerId: found[2] as string };
}

/** Serves `handler` (a GET-only fetch handler: the guard rows send no body) on node:http. */
export async function serveFetch(port: number, handler: (request: Request) => Promise<Response>): Promise<RunningTarget> {
  const server = await listen(
    (incoming: IncomingMessage, outgoing: ServerResponse) => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(incoming.headers)) {
        if (typeof value === 'string') headers.set(name, value);
        else if (Array.isArray(value)) for (const one of value) headers.append(name, one);
      }
      const request = new Request(`http://${incoming.headers.host ?? HOST}${incoming.url ?? '/'}`, {
        method: incoming.method ?? 'GET',
        headers,
      });
      handler(request)
        .then(async (response) => {
          outgoing.statusCode = response.status;
          response.headers.forEach((value, name) => {
            outgoing.setHeader(name, value);
          });
          outgoing.end(Buffer.from(await response.arrayBuffer()));
        })
        .catch(() => {
          outgoing.statusCode = 500;
          outgoing.end();
        });
    },
    port,
    HOST,
  );
  return { close: () => closeServer(server) };
}
