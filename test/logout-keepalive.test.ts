/**
 * Kept-alive connections of back-channel logout deliveries (src/logout/logout-agents.ts), against real node:http
 * servers on loopback that count the connections they accept and where each request arrived. Host names resolve
 * through a scripted `node:dns/promises` (the address guard's lookup), so a name can move from 127.0.0.1 to
 * 127.0.0.2 between two attempts; every other name resolves as usual. The pools here keep idle connections for a
 * minute, so only `close()` (or the server) can close them while a test runs.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';

vi.mock('node:dns/promises', async (original) => (await import('./helpers/scripted-dns.js')).scriptedDns(original));
const { resolved } = await import('./helpers/scripted-dns.js');

const { LogoutAgents } = await import('../src/logout/logout-agents.js');
const { postLogoutToken } = await import('../src/logout/post-logout-token.js');

const IDLE_MS = 60_000;
const MAX_SOCKETS = 8;
// A name the URI check lets travel over plain http (a loopback host), moved between addresses by the scripted DNS.
const NAME = 'localhost';

/** A server on every IPv4 loopback address: each connection and each request, by the local address it came to. */
interface CountingServer {
  port: number;
  /** The local address of each connection accepted, in order. */
  connections: string[];
  /** Connections still open. */
  readonly open: number;
  /** For each request: the local address, the connection's number (its index in `connections`) and the Host. */
  requests: { address: string; connection: number; host: string | undefined }[];
  close(): Promise<void>;
}

type Answer = (request: IncomingMessage, response: ServerResponse, nthOnConnection: number) => void;

async function countingServer(answer: Answer = (_request, response) => response.writeHead(200).end()): Promise<CountingServer> {
  const connections: string[] = [];
  const numbers = new WeakMap<Socket, { index: number; served: number }>();
  const requests: CountingServer['requests'] = [];
  let open = 0;
  const server: Server = createServer((request, response) => {
    const connection = numbers.get(request.socket) as { index: number; served: number };
    connection.served += 1;
    requests.push({ address: request.socket.localAddress as string, connection: connection.index, host: request.headers.host });
    request.resume();
    request.on('end', () => answer(request, response, connection.served));
  });
  server.on('connection', (socket: Socket) => {
    numbers.set(socket, { index: connections.length, served: 0 });
    connections.push(socket.localAddress as string);
    open += 1;
    socket.on('close', () => {
      open -= 1;
    });
  });
  // The server keeps idle connections longer than the pools here (its default is 5 s, and it says so in a
  // Keep-Alive header the client honours): an idle connection closes only when the test's side closes it.
  server.keepAliveTimeout = 2 * IDLE_MS;
  server.listen(0, '0.0.0.0');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    get open() {
      return open;
    },
    requests,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  resolved.clear();
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function setUp(answer?: Answer) {
  const server = await countingServer(answer);
  const agents = new LogoutAgents({ maxSockets: MAX_SOCKETS, idleMs: IDLE_MS });
  cleanup.push(
    () => server.close(),
    () => agents.close(),
  );
  return { server, agents };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !check(); waited += 10) {
    if (waited > 20_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('kept-alive logout connections', () => {
  it('40 deliveries, 8 at a time, travel over at most 8 connections', async () => {
    const { server, agents } = await setUp();
    const uri = `http://127.0.0.1:${server.port}/logout`;
    for (let round = 0; round < 5; round++) {
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, () => postLogoutToken(uri, 'token', { allowPrivateAddresses: true, agents })),
      );
      expect(outcomes.map((outcome) => outcome.kind)).toEqual(Array(8).fill('delivered'));
    }
    expect(server.requests).toHaveLength(40);
    // One connection per delivery without the pool; with it, the first round's eight carry the rest.
    expect(server.connections.length).toBeLessThanOrEqual(8);
  });

  it('a name that resolves elsewhere gets a new connection to the new checked address, and the old one no token', async () => {
    const { server, agents } = await setUp();
    const uri = `http://${NAME}:${server.port}/logout`;
    const post = () => postLogoutToken(uri, 'token', { allowPrivateAddresses: true, agents });
    resolved.set(NAME, [{ address: '127.0.0.1', family: 4 }]);
    for (let i = 0; i < 3; i++) expect((await post()).kind).toBe('delivered');
    resolved.set(NAME, [{ address: '127.0.0.2', family: 4 }]);
    for (let i = 0; i < 3; i++) expect((await post()).kind).toBe('delivered');
    expect(server.connections).toEqual(['127.0.0.1', '127.0.0.2']);
    expect(server.requests.map((request) => request.address)).toEqual([...Array(3).fill('127.0.0.1'), ...Array(3).fill('127.0.0.2')]);
    // The connection is pinned, the request is still the name's.
    expect(new Set(server.requests.map((request) => request.host))).toEqual(new Set([`${NAME}:${server.port}`]));
  });

  it('a refused address is refused at the attempt, with a kept-alive connection to it at hand', async () => {
    const { server, agents } = await setUp();
    const uri = `http://${NAME}:${server.port}/logout`;
    resolved.set(NAME, [{ address: '127.0.0.1', family: 4 }]);
    expect((await postLogoutToken(uri, 'token', { allowPrivateAddresses: true, agents })).kind).toBe('delivered');
    expect(server.open).toBe(1);
    // The same pool, the same name and address, now under the guard that refuses loopback.
    const refused = await postLogoutToken(uri, 'token', { allowPrivateAddresses: false, agents });
    expect(refused).toEqual({ kind: 'refused', reason: expect.stringMatching(/private, loopback or link-local/) });
    expect(server.requests).toHaveLength(1);
  });

  it('an app whose connections all hang does not hold up another app on the same host', async () => {
    const hanging: ServerResponse[] = [];
    const { server, agents } = await setUp((request, response) => {
      if (request.url === '/hang') hanging.push(response);
      else response.writeHead(200).end();
    });
    cleanup.push(() => {
      for (const response of hanging) response.destroy();
    });
    const base = `http://127.0.0.1:${server.port}`;
    const stuck = Array.from({ length: MAX_SOCKETS }, () =>
      postLogoutToken(`${base}/hang`, 'token', { allowPrivateAddresses: true, agents }),
    );
    await until(() => hanging.length === MAX_SOCKETS, 'every connection of the agent hanging');
    // The host's agent has all of its connections busy: this one goes on a connection of its own, not in its queue.
    const other = await postLogoutToken(`${base}/ok`, 'token', { allowPrivateAddresses: true, agents, timeoutMs: 20_000 });
    expect(other.kind).toBe('delivered');
    expect(hanging).toHaveLength(MAX_SOCKETS);
    for (const response of hanging) response.writeHead(200).end();
    expect((await Promise.all(stuck)).map((outcome) => outcome.kind)).toEqual(Array(MAX_SOCKETS).fill('delivered'));
  });

  it('a kept-alive connection the app closes as it is reused: the attempt goes on a new one', async () => {
    // The app drops each connection on its second request, unanswered (its idle timeout running out at that moment).
    const { server, agents } = await setUp((request, response, nth) => {
      if (nth > 1) request.socket.destroy();
      else response.writeHead(200).end();
    });
    const uri = `http://127.0.0.1:${server.port}/logout`;
    expect((await postLogoutToken(uri, 'token', { allowPrivateAddresses: true, agents })).kind).toBe('delivered');
    expect((await postLogoutToken(uri, 'token', { allowPrivateAddresses: true, agents })).kind).toBe('delivered');
    expect(server.requests.map((request) => request.connection)).toEqual([0, 0, 1]);
  });

  it('close() closes the idle connections, which would otherwise stay open for their minute', async () => {
    const { server, agents } = await setUp();
    const uri = `http://127.0.0.1:${server.port}/logout`;
    await Promise.all(Array.from({ length: 4 }, () => postLogoutToken(uri, 'token', { allowPrivateAddresses: true, agents })));
    expect(server.connections).toHaveLength(4);
    expect(server.open).toBe(4);
    agents.close();
    await until(() => server.open === 0, 'the idle connections to close');
    // A closed pool keeps nothing: a late attempt connects on its own and closes after its answer.
    expect((await postLogoutToken(uri, 'token', { allowPrivateAddresses: true, agents })).kind).toBe('delivered');
    await until(() => server.open === 0, 'the late connection to close');
    expect(server.connections).toHaveLength(5);
  });
});
