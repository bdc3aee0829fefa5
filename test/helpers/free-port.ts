/**
 * A free TCP port on 127.0.0.1 for servers the tests start (examples, private redis-servers, benchmark targets).
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
