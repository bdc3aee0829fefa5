/**
 * A back-channel logout receiver is the app's, and may answer anything. One that answers `101 Switching Protocols`
 * got neither a response nor an error from Node (it destroys the socket when no one listens for the upgrade), so the
 * attempt waited for good: past its own deadline, holding its app's delivery slot and the instance's, and
 * `sentinel.close()` waited with it. And every attempt under way hangs one listener on the delivery loop's stop
 * signal, so a dozen apps' deliveries at once made Node warn of a listener leak that is none.
 * The receivers are raw TCP servers on loopback (`clientJwks.allowPrivateAddresses`, development only).
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { createSentinel, MemoryStore, type SentinelEvent } from '../src/index.js';
import { LogoutAgents } from '../src/logout/logout-agents.js';
import { postLogoutToken } from '../src/logout/post-logout-token.js';
import { ACCOUNT, baseOptions, USER_ID } from './helpers/fixtures.js';
import { appEntry, type FlowApp, signInThroughSession, signInWithSession } from './helpers/logout-flow.js';

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const step of cleanup.splice(0).reverse()) step();
});

const SWITCH = 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: x-other\r\nConnection: Upgrade\r\n\r\n';
const OK = 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n';

/** A receiver on loopback that answers each request whose path starts with `/switch` with a 101, any other with 200. */
async function receiver(): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    let head = '';
    socket.on('data', (chunk) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const path = /^POST (\S+)/.exec(head)?.[1] ?? '';
      head = '';
      hits.push(path);
      socket.write(path.startsWith('/switch') ? SWITCH : OK);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, hits };
}

it('an attempt answered 101 is refused at once, on a connection of its own and through the kept-alive agents', async () => {
  const { port, hits } = await receiver();
  const agents = new LogoutAgents();
  cleanup.push(() => agents.close());
  // A deadline longer than the test's own timeout: the attempt must settle on the answer, not on the deadline.
  for (const options of [{}, { agents }]) {
    const outcome = await postLogoutToken(`http://127.0.0.1:${port}/switch`, 'eyJ.logout.token', {
      allowPrivateAddresses: true,
      timeoutMs: 60_000,
      ...options,
    });
    expect(outcome).toEqual({ kind: 'refused', status: 101, reason: 'the app answered 101 (switching protocols)' });
  }
  expect(hits).toEqual(['/switch', '/switch']);
}, 10_000);

it('a receiver answering 101 holds no slot, a dozen deliveries at once raise no warning, and close() ends', async () => {
  const { port, hits } = await receiver();
  const app = (index: number): FlowApp => ({
    clientId: `abcdabcd-0000-4000-8000-${String(index).padStart(12, '0')}`,
    clientSecret: `secret-${index}-0123456789abcdef0123`,
    redirectUri: `https://r${index}.example.com/cb`,
  });
  // One app switching protocols and twelve that take the token: more attempts at once than Node's listener warning.
  const apps = Array.from({ length: 13 }, (_, index) => app(index));
  const events: SentinelEvent[] = [];
  const base = baseOptions();
  const sentinel = createSentinel({
    ...base,
    store: new MemoryStore(),
    apps: [
      ...(base.apps ?? []),
      ...apps.map((entry, index) =>
        appEntry(entry, { backchannelLogoutUri: `http://127.0.0.1:${port}/${index === 0 ? 'switch' : 'ok'}/${index}` }),
      ),
    ],
    clientJwks: { allowPrivateAddresses: true },
    onEvent: (event) => events.push(event),
  });
  const warnings: Error[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning);
  process.on('warning', onWarning);
  cleanup.push(() => process.off('warning', onWarning));

  const { cookie } = await signInWithSession(sentinel, apps[0] as FlowApp);
  for (const other of apps.slice(1)) await signInThroughSession(sentinel, other, cookie);
  expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(1);
  const settled = () => events.filter((event) => event.type === 'logout.delivered' || event.type === 'logout.failed');
  while (settled().length < apps.length) await new Promise((resolve) => setTimeout(resolve, 50));

  expect(events.filter((event) => event.type === 'logout.delivered')).toHaveLength(12);
  const failed = events.filter((event) => event.type === 'logout.failed');
  expect(failed).toMatchObject([{ clientId: apps[0]?.clientId, attempts: 1, reason: expect.stringMatching(/101/) }]);
  expect(hits.filter((path) => path.startsWith('/switch'))).toHaveLength(1);
  // The next logout reaches the same receiver and settles too; close() then ends, which no hung attempt let it do.
  await signInWithSession(sentinel, apps[0] as FlowApp);
  await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID });
  while (events.filter((event) => event.type === 'logout.failed').length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
  await sentinel.close();
  expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning');
}, 30_000);
