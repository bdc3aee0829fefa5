/**
 * What a host is to the suites: a framework that mounts a sentinel and listens on an ephemeral 127.0.0.1 port
 * (`hosts.ts` lists the frameworks, `handle-host.ts` is the bare `sentinel.handle()` one).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Sentinel } from '../../src/index.js';

/** How a suite wants the host built. */
export interface MountOptions {
  /** Mount the service under this prefix (e.g. '/idp'). */
  prefix?: string;
  /** Which host body parser runs, and where: none, before the service, or after it. */
  bodyParser?: 'none' | 'before' | 'after';
  /**
   * A `Set-Cookie` line the host's own middleware writes on every response before the service runs (a host's visitor
   * or consent cookie): the service's answer must keep it beside its own.
   */
  hostCookie?: string;
  /** Receives errors the framework's error handler sees. */
  onHostError?: (error: unknown) => void;
  /**
   * A second handler of the service's shape (the operator console) mounted with the same adapter right after the
   * service, under the same prefix: the way a host mounts both.
   */
  beside?: Pick<Sentinel, 'config' | 'handle'>;
}

/** A running host. */
export interface MountedHost {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** A framework under test. */
export interface Host {
  name: string;
  mount(sentinel: Sentinel, options?: MountOptions): Promise<MountedHost>;
}

/** Listens on 127.0.0.1:0 and returns the running host. */
export async function listen(server: Server): Promise<MountedHost> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A bare node:http host around `serve`: what `serve` throws goes to `onHostError` and is answered with the 500 text
 * the framework hosts' own error handlers send, so the suites see one host error page everywhere.
 */
export function listenNode(
  options: MountOptions,
  serve: (incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void>,
): Promise<MountedHost> {
  const server = createServer((incoming, outgoing) => {
    serve(incoming, outgoing).catch((error: unknown) => {
      options.onHostError?.(error);
      if (!outgoing.headersSent) {
        outgoing.statusCode = 500;
        outgoing.setHeader('content-type', 'text/plain');
      }
      outgoing.end('host error handler');
    });
  });
  return listen(server);
}
