/**
 * Runs ONE benchmark target in this (child) process: `node --import tsx bench/server.ts <module>[:<variant>] <port>`,
 * spawned by bench/run.ts with an IPC channel. The variant (e.g. `sentinel-fastify:sync`) is passed to the module's
 * `start`.
 *
 * IPC, parent → child: {type:'cpu-start'} | {type:'cpu-stop'} | {type:'close'} | {type:'profile-start'}
 *                      | {type:'profile-stop', file}
 *      child → parent: {type:'ready'} | {type:'failed', error} | {type:'cpu-started'}
 *                      | {type:'cpu', userUs, systemUs, rss} | {type:'profile-started'} | {type:'profiled'}
 * process.cpuUsage() counts user + system time of every thread of the process (main thread, libuv threadpool,
 * V8 GC and compiler threads), so CPU per request = the delta over the load window ÷ requests completed in it.
 * The child exits when its parent goes away (IPC disconnect) and after a hard time limit, so no server outlives
 * the run.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import type { TargetModule } from './targets/types.js';

type Message =
  | { type: 'cpu-start' }
  | { type: 'cpu-stop' }
  | { type: 'close' }
  | { type: 'profile-start' }
  | { type: 'profile-stop'; file: string };

function send(message: Record<string, unknown>): void {
  if (process.send) process.send(message);
}

const [moduleArg = '', portArg] = process.argv.slice(2);
const [moduleName, variant] = moduleArg.split(':');
const port = Number(portArg);
const maxSeconds = Number(process.env.BENCH_CHILD_MAX_S ?? 900);

setTimeout(() => {
  console.error(`[bench/server] ${moduleName}: hard time limit of ${maxSeconds}s reached, exiting`);
  process.exit(3);
}, maxSeconds * 1000).unref();
process.on('disconnect', () => process.exit(0));

async function main(): Promise<void> {
  if (!moduleName || !/^[a-z0-9-]+(:[a-z0-9-]+)?$/.test(moduleArg) || !Number.isInteger(port) || port <= 0) {
    throw new Error('usage: server.ts <target-module>[:<variant>] <port>');
  }
  const target = (await import(new URL(`./targets/${moduleName}.js`, import.meta.url).href)) as TargetModule;
  const running = await target.start(port, variant);
  let cpuStart: NodeJS.CpuUsage | undefined;
  process.on('message', (message: Message) => {
    if (message.type === 'cpu-start') {
      cpuStart = process.cpuUsage();
      send({ type: 'cpu-started' });
    } else if (message.type === 'cpu-stop') {
      const delta = process.cpuUsage(cpuStart);
      send({ type: 'cpu', userUs: delta.user, systemUs: delta.system, rss: process.memoryUsage().rss });
    } else if (message.type === 'profile-start' || message.type === 'profile-stop') {
      // bench/profile.ts: V8's sampling profiler (what `node --cpu-prof` runs) over the load window only.
      profile(message).then(
        () => send({ type: message.type === 'profile-start' ? 'profile-started' : 'profiled' }),
        (err: unknown) => send({ type: 'failed', error: String(err) }),
      );
    } else if (message.type === 'close') {
      running.close().finally(() => process.exit(0));
      setTimeout(() => process.exit(0), 2000).unref();
    }
  });
  send({ type: 'ready' });
}

let session: Session | undefined;
async function profile(message: { type: 'profile-start' } | { type: 'profile-stop'; file: string }): Promise<void> {
  const post = (method: string, params?: object): Promise<unknown> =>
    new Promise((resolve, reject) =>
      (session as Session).post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))),
    );
  if (message.type === 'profile-start') {
    session = new Session();
    session.connect();
    await post('Profiler.enable');
    await post('Profiler.setSamplingInterval', { interval: 100 });
    await post('Profiler.start');
    return;
  }
  const { profile: taken } = (await post('Profiler.stop')) as { profile: unknown };
  await writeFile(message.file, JSON.stringify(taken));
  session?.disconnect();
}

main().catch((err: unknown) => {
  const error = err instanceof Error ? err.message : String(err);
  send({ type: 'failed', error });
  setTimeout(() => process.exit(2), 100);
});
