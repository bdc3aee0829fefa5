/**
 * The change listener's connection dying silently: a proxy between the store and PostgreSQL stops forwarding the
 * LISTEN connection's traffic, both ways, without closing it (a NAT or load balancer dropping an idle flow: no FIN,
 * no RST). The heartbeat must find it within its interval and timeout, stop trusting the cache, and listen again on a
 * new connection; until then a rotation with no overlap or a delete made elsewhere stays unseen.
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/apps/app.js';
import { hashClientSecret, verifyAppSecret } from '../src/apps/client-secrets.js';
import { CHANGE_CHANNEL } from '../src/postgres/change-log.js';
import { PostgresAppStore } from '../src/postgres/index.js';
import { HEARTBEAT_INTERVAL_MS, HEARTBEAT_TIMEOUT_MS } from '../src/postgres/listener-heartbeat.js';
import { sharedPostgres, useThrowawayDatabase } from './helpers/postgres.js';

const available = await sharedPostgres('postgres-listener-heartbeat');
const database = useThrowawayDatabase(available);

/** A TCP proxy to the database that can stop forwarding the connections that sent LISTEN, leaving them open. */
async function blackholeProxy(target: URL): Promise<{ port: number; listeners(): number; freezeListeners(): number; close(): void }> {
  const sockets = new Map<net.Socket, { listener: boolean; frozen: boolean }>();
  const server = net.createServer((client) => {
    const state = { listener: false, frozen: false };
    sockets.set(client, state);
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    client.on('data', (chunk) => {
      if (chunk.includes(`LISTEN ${CHANGE_CHANNEL}`)) state.listener = true;
      if (!state.frozen) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!state.frozen) client.write(chunk);
    });
    client.on('error', () => {});
    upstream.on('error', () => {});
    client.on('close', () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const open = () => [...sockets.values()].filter((state) => state.listener && !state.frozen);
  return {
    port,
    listeners: () => open().length,
    freezeListeners: () => {
      const listening = open();
      for (const state of listening) state.frozen = true;
      return listening.length;
    },
    close: () => {
      for (const socket of sockets.keys()) socket.destroy();
      server.close();
    },
  };
}

function app(accountId: string, clientId: string, secret: string): App {
  return {
    accountId,
    clientId,
    clientSecretHash: hashClientSecret(secret),
    redirectUris: [],
    grantTypes: ['client_credentials'],
    tokenEndpointAuthMethod: 'client_secret_basic',
  };
}

describe.skipIf(available.skip)('the change listener on a silently dead connection', () => {
  it('stops trusting the cache within the heartbeat bound and listens again', async () => {
    const direct = new URL(database().url);
    const proxy = await blackholeProxy(direct);
    const proxied = new URL(database().url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    const other = new PostgresAppStore({ connectionString: database().url, cache: false });
    // The longest TTL: without the heartbeat the stale entries would be served for a minute.
    const store = new PostgresAppStore({ connectionString: proxied.toString(), cache: { ttlSeconds: 60 } });
    try {
      await other.migrate();
      const accountId = `heartbeat-${randomUUID()}`;
      await other.saveApp(app(accountId, 'rotated', 'old-secret'));
      await other.saveApp(app(accountId, 'deleted', 'secret'));
      // Bring the listener up, then cache both apps.
      await store.findApp(accountId, 'rotated');
      const deadline = Date.now() + 3000;
      while (proxy.listeners() === 0 && Date.now() < deadline) await sleep(25);
      await sleep(100);
      await store.findApp(accountId, 'rotated');
      await store.findApp(accountId, 'deleted');

      expect(proxy.freezeListeners()).toBe(1);
      const frozenAt = Date.now();
      // A leaked secret rotated with no overlap, and an app deleted, by another instance or the CLI.
      await other.rotateClientSecret(accountId, 'rotated', hashClientSecret('new-secret'), 0);
      await other.deleteApp(accountId, 'deleted');

      const bound = HEARTBEAT_INTERVAL_MS + HEARTBEAT_TIMEOUT_MS + 1000;
      let seenAfter = -1;
      while (Date.now() - frozenAt < bound) {
        const rotated = await store.findApp(accountId, 'rotated');
        const deleted = await store.findApp(accountId, 'deleted');
        if (!verifyAppSecret('old-secret', rotated) && verifyAppSecret('new-secret', rotated) && deleted === null) {
          seenAfter = Date.now() - frozenAt;
          break;
        }
        await sleep(100);
      }
      expect(seenAfter).toBeGreaterThanOrEqual(0);

      // A new LISTEN connection replaces the dead one, and its notifications reach the cache again.
      const relisten = Date.now() + 3000;
      while (proxy.listeners() === 0 && Date.now() < relisten) {
        await store.findApp(accountId, 'rotated');
        await sleep(50);
      }
      expect(proxy.listeners()).toBe(1);
    } finally {
      await store.close();
      await other.close();
      proxy.close();
    }
  });
});
