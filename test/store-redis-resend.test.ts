/**
 * A connection that drops after Redis ran a command but before its reply arrived: the clients built from
 * `redisClientOptions()` and `redisClusterOptions()` must not send the command again. ioredis does by default (a
 * Redis client once it reconnects, `autoResendUnfulfilledCommands`; a Cluster client at once, `retryDelayOnFailover`),
 * and a second INCR counts a sign-in failure twice and refuses a first-time DPoP proof or client assertion as
 * replayed; a second swap finds its own write and answers "already spent". The connections run through proxies of
 * this file that swallow one reply and cut the connection, in front of a private redis-server or Redis Cluster.
 */
import { createServer, type Server, Socket } from 'node:net';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore, redisClientOptions, redisClusterOptions } from '../src/stores/redis.js';
import { clusterAvailability, type RunningCluster, startCluster } from './helpers/redis-cluster.js';
import { redisServerBinary, requireAvailable, usePrivateRedis } from './helpers/redis.js';

const binary = redisServerBinary('store-redis-resend');
const clusterAvailable = clusterAvailability('store-redis-resend');

/** A TCP proxy to `port` that, once armed, drops the next reply from Redis and cuts the client's connection. */
class ReplyDropper {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #armed = false;

  constructor(upstreamPort: number, upstreamHost = '127.0.0.1') {
    this.#server = createServer((client) => {
      const upstream = new Socket();
      this.#sockets.add(client).add(upstream);
      upstream.connect(upstreamPort, upstreamHost);
      client.on('data', (chunk) => upstream.write(chunk));
      upstream.on('data', (chunk) => {
        if (!this.#armed) return void client.write(chunk);
        this.#armed = false;
        client.destroy();
        upstream.destroy();
      });
      for (const socket of [client, upstream]) {
        socket.on('error', () => {});
        socket.on('close', () => {
          client.destroy();
          upstream.destroy();
        });
      }
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return (this.#server.address() as { port: number }).port;
  }

  arm(): void {
    this.#armed = true;
  }

  disarm(): void {
    this.#armed = false;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

async function whenReady(client: Redis): Promise<void> {
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
}

describe.skipIf(binary.skip)('RedisStore on redisClientOptions() when a reply is lost with its connection', () => {
  const { server, connect } = usePrivateRedis(binary);
  let proxy: ReplyDropper;
  let client: Redis;
  let direct: Redis;
  let store: RedisStore;

  beforeAll(async () => {
    proxy = new ReplyDropper(server.port);
    const port = await proxy.listen();
    client = new Redis(`redis://127.0.0.1:${port}`, redisClientOptions());
    client.on('error', () => {});
    direct = connect();
    store = new RedisStore(client, { prefix: 'resend:' });
    await whenReady(client);
    // Caches the scripts, so that the reply dropped below is the one of the command that ran, not a NOSCRIPT.
    await store.increment('throttle:warm-up', 60_000);
    await store.swap([{ key: 'warm-up:{w}', expect: null, value: 'x', ttlMs: 60_000 }]);
  });

  afterAll(async () => {
    client.disconnect();
    await proxy.close();
  });

  it('counts an increment once, and does not report it as a second use', async () => {
    proxy.arm();
    const outcome = await store.increment('throttle:lost-reply', 60_000).then(
      (count) => count,
      () => 'rejected',
    );
    await whenReady(client);
    // Whatever ioredis does later with the command, the counter must hold the one increment Redis ran.
    await store.get('throttle:settle');
    expect(await direct.get('resend:throttle:lost-reply')).toBe('1');
    expect(outcome === 1 || outcome === 'rejected', `the store answered ${outcome}`).toBe(true);
  });

  it('does not answer a swap that applied as one that found its keys changed', async () => {
    await whenReady(client);
    proxy.arm();
    const outcome = await store.swap([{ key: 'code:{g1}', expect: null, value: 'grant', ttlMs: 60_000 }]).then(
      (applied) => applied,
      () => 'rejected',
    );
    expect(await direct.get('resend:code:{g1}')).toBe('grant');
    expect(outcome === true || outcome === 'rejected', `the store answered ${outcome}`).toBe(true);
  });
});

describe.skipIf(clusterAvailable.skip)('RedisStore on redisClusterOptions() when a reply is lost with its node connection', () => {
  let cluster: RunningCluster | undefined;
  const proxies: ReplyDropper[] = [];
  let client: Cluster;
  let store: RedisStore;

  beforeAll(async () => {
    requireAvailable(clusterAvailable);
    cluster = await startCluster();
    // Every node is reached through a proxy: the addresses the cluster announces are mapped to the proxies'.
    const natMap: Record<string, { host: string; port: number }> = {};
    for (const node of cluster.nodes) {
      const proxy = new ReplyDropper(node.port, node.host);
      proxies.push(proxy);
      natMap[`${node.host}:${node.port}`] = { host: '127.0.0.1', port: await proxy.listen() };
    }
    client = new Cluster(Object.values(natMap), { ...redisClusterOptions(), natMap });
    client.on('error', () => {});
    await new Promise((resolve) => client.once('ready', resolve));
    store = new RedisStore(client, { prefix: `resend-${process.pid}:` });
    // Caches the scripts on the node of the slot used below, so that the reply dropped is the one of the command.
    await store.increment('throttle:{r}warm-up', 60_000);
    await store.swap([{ key: 'warm-up:{r}', expect: null, value: 'x', ttlMs: 60_000 }]);
  }, 60_000);

  afterAll(async () => {
    client?.disconnect();
    for (const proxy of proxies) await proxy.close();
    await cluster?.stop();
  });

  it('counts an increment once, and does not report it as a second use', async () => {
    for (const proxy of proxies) proxy.arm();
    const outcome = await store.increment('throttle:{r}lost-reply', 60_000).then(
      (count) => count,
      () => 'rejected',
    );
    for (const proxy of proxies) proxy.disarm();
    expect(await store.get('throttle:{r}lost-reply')).toBe('1');
    expect(outcome === 1 || outcome === 'rejected', `the store answered ${outcome}`).toBe(true);
  });

  it('does not answer a swap that applied as one that found its keys changed', async () => {
    for (const proxy of proxies) proxy.arm();
    const outcome = await store.swap([{ key: 'code:{r}', expect: null, value: 'grant', ttlMs: 60_000 }]).then(
      (applied) => applied,
      () => 'rejected',
    );
    for (const proxy of proxies) proxy.disarm();
    expect(await store.get('code:{r}')).toBe('grant');
    expect(outcome === true || outcome === 'rejected', `the store answered ${outcome}`).toBe(true);
  });
});
