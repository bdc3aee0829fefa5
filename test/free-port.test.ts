/**
 * The retry for servers that pick their port before they bind it (redis-server, postgres, the examples): when
 * someone else binds the port in between, the server starts again on another one rather than failing the suite.
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startOnFreePort } from './helpers/free-port.js';

const servers: Server[] = [];

function listenOn(port: number): Promise<Server> {
  const server = createServer();
  servers.push(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('startOnFreePort', () => {
  it('starts again on another port when the one it picked was taken meanwhile', async () => {
    const tried: number[] = [];
    const server = await startOnFreePort(async (port) => {
      tried.push(port);
      // The first time, someone else gets there first.
      if (tried.length === 1) await listenOn(port);
      return listenOn(port);
    });
    expect(tried).toHaveLength(2);
    expect(tried[1]).not.toBe(tried[0]);
    expect(server.address()).toMatchObject({ port: tried[1] });
  });

  it('passes any other failure on at once', async () => {
    let calls = 0;
    const failing = startOnFreePort(async () => {
      calls += 1;
      throw new Error('the binary is missing');
    });
    await expect(failing).rejects.toThrow('the binary is missing');
    expect(calls).toBe(1);
  });

  it('gives up after the attempts it was given', async () => {
    let calls = 0;
    const taken = startOnFreePort(async (port) => {
      calls += 1;
      await listenOn(port);
      return listenOn(port);
    }, 3);
    await expect(taken).rejects.toThrow(/EADDRINUSE/);
    expect(calls).toBe(3);
  });
});
