/**
 * `PostgresAppStore.close()` ends even when the change listener's connection never finished starting: a server that
 * accepts the TCP connection and never answers (a proxy whose database is gone) behind a host's pool without
 * `connectionTimeoutMillis`. Before, close() waited for that peer forever, and so did the host's shutdown.
 * No PostgreSQL needed: the silent server is a plain TCP server of the test's own.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresAppStore } from '../src/postgres/index.js';

const sockets: Socket[] = [];
let server: Server | undefined;

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

async function silentServer(): Promise<number> {
  server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => {});
    // Never read from nor answered: the client's polite goodbye (Terminate, then FIN) goes unheard.
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('PostgresAppStore.close() with a listener stuck connecting', () => {
  it('resolves instead of waiting for a server that never answers', async () => {
    const port = await silentServer();
    const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'sentinel', database: 'sentinel' });
    pool.on('error', () => {});
    const store = new PostgresAppStore({ pool });
    // The lookup starts the change listener; both wait on the silent server.
    const lookup = store.findApp('acct-1', 'client-1').catch((error: unknown) => error);
    while (sockets.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));

    await expect(store.close()).resolves.toBeUndefined();
    // The lookup's connection belongs to the host's pool and is left to it: cut here to end the test.
    for (const socket of sockets) socket.destroy();
    expect(await lookup).toBeInstanceOf(Error);
    await pool.end();
  }, 15_000);
});
