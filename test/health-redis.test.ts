/**
 * Health and readiness over HTTP with a RedisStore on a private `redis-server` this file starts, kills and starts
 * again: live stays 200 throughout; ready is 200, then 503 naming the store while Redis is down, then 200 again once
 * it is back (the same store instance reconnects on its own).
 *
 * No redis-server binary: skipped with a warning, unless SENTINEL_REQUIRE_REDIS=1, where it fails.
 */
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../src/stores/redis.js';
import { makeSentinel } from './helpers/fixtures.js';
import { HOSTS, type Host, type MountedHost } from './helpers/hosts.js';
import { PrivateRedis, redisServerBinary, requireAvailable } from './helpers/redis.js';

const binary = redisServerBinary('health-redis');

/** How long the reconnecting client may take once Redis is back (ioredis backs off up to a few seconds). */
const RECOVERY_DEADLINE_MS = 20_000;

async function readiness(host: MountedHost): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await request(host.server).get('/sentinel/health/ready');
  return { status: response.status, body: response.body as Record<string, unknown> };
}

describe.skipIf(binary.skip)('health endpoints with Redis killed and restarted', () => {
  const server = new PrivateRedis();
  let client: Redis;
  let host: MountedHost;

  beforeAll(async () => {
    requireAvailable(binary);
    await server.start();
    client = new Redis(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    client.on('error', () => {}); // the outage is the point; it shows as a failed readiness check
    // Without an offline queue, a command sent before the connection is up fails: wait for it, as a host's start would.
    if (client.status !== 'ready') await once(client, 'ready');
    const sentinel = makeSentinel({ store: new RedisStore(client, { prefix: 'health:', commandTimeoutMs: 300 }) });
    host = await (HOSTS.find((candidate) => candidate.name === 'express5') as Host).mount(sentinel);
  });

  afterAll(async () => {
    await host?.close();
    client?.disconnect();
    await server.destroy();
  });

  it('answers 200 to both while Redis is up, with no-store JSON and nothing but check names', async () => {
    const live = await request(host.server).get('/sentinel/health/live');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    const ready = await request(host.server).get('/sentinel/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.headers['cache-control']).toBe('no-store');
    expect(ready.body).toEqual({ status: 'ready', checks: { store: 'ok', keys: 'ok', apps: 'ok' } });
  });

  it('goes 503 naming the store when Redis is killed, stays live, and returns to 200 after a restart', async () => {
    await server.kill();
    const down = await readiness(host);
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: 'unavailable', checks: { store: 'failed', keys: 'ok', apps: 'ok' } });
    expect((await request(host.server).get('/sentinel/health/live')).status).toBe(200);

    await server.start(); // same port: the existing client reconnects
    const deadline = Date.now() + RECOVERY_DEADLINE_MS;
    let back = await readiness(host);
    while (back.status !== 200 && Date.now() < deadline) {
      await sleep(200);
      back = await readiness(host);
    }
    expect(back).toEqual({ status: 200, body: { status: 'ready', checks: { store: 'ok', keys: 'ok', apps: 'ok' } } });
  });
});
