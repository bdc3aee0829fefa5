/**
 * A real 3-master Redis Cluster for the Store contract. `.ci/run` starts one and names it in
 * SENTINEL_REDIS_CLUSTER (`host:port,host:port,host:port`); without that variable the suite starts a private one
 * itself — three `redis-server --cluster-enabled yes` on spare ports joined by `redis-cli --cluster create` — and
 * kills exactly those processes afterwards.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import { availability, type Availability, PrivateRedis, REDIS_SERVER } from './redis.js';

const run = promisify(execFile);

/** The redis-cli binary that joins the private cluster. */
export const REDIS_CLI = process.env.REDIS_CLI ?? '/usr/bin/redis-cli';
/** A cluster started outside the tests (CI), as `host:port` seed nodes. */
export const CLUSTER_NODES = process.env.SENTINEL_REDIS_CLUSTER;

/** Whether a cluster is there or can be started, as an {@link Availability} (prints the skip reason). */
export function clusterAvailability(suite: string): Availability {
  if (CLUSTER_NODES !== undefined && CLUSTER_NODES !== '') return availability(suite, null);
  if (!existsSync(REDIS_SERVER)) return availability(suite, `no redis-server binary at ${REDIS_SERVER}`);
  return availability(suite, existsSync(REDIS_CLI) ? null : `no redis-cli binary at ${REDIS_CLI}`);
}

/** A running cluster: seed nodes, and how to stop it (a no-op for one started outside the tests). */
export interface RunningCluster {
  nodes: Array<{ host: string; port: number }>;
  stop(): Promise<void>;
}

/** The cluster of SENTINEL_REDIS_CLUSTER, or a private one started now. */
export async function startCluster(): Promise<RunningCluster> {
  if (CLUSTER_NODES !== undefined && CLUSTER_NODES !== '') {
    const nodes = CLUSTER_NODES.split(',').map((node) => {
      const [host, port] = node.trim().split(':');
      return { host: host as string, port: Number(port) };
    });
    return { nodes, stop: async () => {} };
  }
  const servers = [0, 1, 2].map(
    () => new PrivateRedis(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000']),
  );
  const stop = async (): Promise<void> => {
    for (const server of servers) await server.destroy();
  };
  try {
    for (const server of servers) await server.start();
    await run(REDIS_CLI, [
      '--cluster',
      'create',
      ...servers.map((server) => `127.0.0.1:${server.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    // `create` returns once the slots are assigned; wait until every node agrees the cluster is up.
    for (const server of servers) {
      for (let attempt = 0; ; attempt++) {
        const { stdout } = await run(REDIS_CLI, ['-p', String(server.port), 'cluster', 'info']);
        if (stdout.includes('cluster_state:ok')) break;
        if (attempt > 100) throw new Error(`the private cluster did not come up:\n${stdout}`);
        await sleep(100);
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes: servers.map((server) => ({ host: '127.0.0.1', port: server.port })), stop };
}

/** An ioredis Cluster client over `cluster`, failing fast like the README's single-node client. */
export async function connectCluster(cluster: RunningCluster): Promise<Cluster> {
  const client = new Cluster(cluster.nodes, {
    enableOfflineQueue: true,
    redisOptions: { maxRetriesPerRequest: 1 },
  });
  client.on('error', () => {}); // surfaced as rejected commands
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve);
    client.once('end', () => reject(new Error('Redis Cluster connection ended before ready')));
  });
  return client;
}
