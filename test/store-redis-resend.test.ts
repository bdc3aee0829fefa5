/**
 * A connection that drops after Redis ran a command but before its reply arrived: the client built from
 * `redisClientOptions()` must not send the command again once it reconnects. ioredis does by default
 * (`autoResendUnfulfilledCommands`), and a second INCR counts a sign-in failure twice and refuses a first-time DPoP
 * proof or client assertion as replayed; a second swap finds its own write and answers "already spent". The
 * connection runs through a proxy of this file that swallows one reply and cuts the connection, in front of a
 * private redis-server.
 */
import { createServer, type Server, Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore, redisClientOptions } from '../src/stores/redis.js';
import { redisServerBinary, usePrivateRedis } from './helpers/redis.js';

const binary = redisServerBinary('store-redis-resend');

/** A TCP proxy to `port` that, once armed, drops the next reply from Redis and cuts the client's connection. */
class ReplyDropper {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #armed = false;

  constructor(upstreamPort: number) {
    this.#server = createServer((client) => {
      const upstream = new Socket();
      this.#sockets.add(client).add(upstream);
      upstream.connect(upstreamPort, '127.0.0.1');
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
