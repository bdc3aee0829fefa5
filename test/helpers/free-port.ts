/**
 * A free TCP port on 127.0.0.1 for servers the tests start as processes (examples, private redis-servers and
 * postgres), and a retry for the moment between picking it and binding it.
 */
import { createServer } from 'node:net';

/** A port nobody listens on right now (the OS picks it; there is a small window in which someone else could). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port assigned'));
      });
    });
  });
}

/** What a server that lost its port to someone else says: Node, redis-server and postgres each word it so. */
const PORT_TAKEN = /EADDRINUSE|address already in use|could not bind/i;

/**
 * Starts a server that cannot listen on port 0 itself (a redis-server, a postgres, an example whose issuer names
 * its port) on a free port, and starts it again on another one when someone else bound the port in between —
 * which happens on a busy machine. A server of the tests' own listens on port 0 instead (`listen()` in `host.ts`).
 *
 * @example
 * const server = await startOnFreePort((port) => launch(port));
 */
export async function startOnFreePort<T>(start: (port: number) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (error) {
      if (attempt >= attempts || !PORT_TAKEN.test(error instanceof Error ? error.message : String(error))) throw error;
    }
  }
}
