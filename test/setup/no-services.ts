/**
 * Runs before each file of `npm run test:unit`, and only there: the unit set promises a loop with no Redis, no
 * PostgreSQL, no SoftHSM2, no Chromium, no built `dist/` and no child process. The run points every service at a
 * closed port and requires it (see `UNIT_ENV` in vitest.config.ts), so a file that reaches for one fails instead
 * of skipping; this file closes the two ways around that — starting a process (a private `redis-server`, the CLI,
 * an example, a toolchain) and dialling a service's usual port directly. Either throws an error that names the fix:
 * list the file in `SERVICE_FILES` of vitest.config.ts.
 */
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

const FIX = 'a file of `npm run test:unit` needs no service; list it in SERVICE_FILES of vitest.config.ts';

/** Redis, PostgreSQL and the Redis Cluster nodes of `.ci/run`. */
const SERVICE_PORTS = new Set([6379, 5432, 7101, 7102, 7103]);

for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
  Object.defineProperty(childProcess, name, {
    configurable: true,
    writable: true,
    value: (command: unknown) => {
      throw new Error(`${name}(${JSON.stringify(command)}) starts a process: ${FIX}`);
    },
  });
}
// `import { spawn } from 'node:child_process'` reads the ESM view of the module; bring it in line with the above.
syncBuiltinESMExports();

/** The port a `socket.connect(…)` call dials, whichever of its forms it uses. */
function portOf(args: unknown[]): number | undefined {
  const [first] = args;
  const options = Array.isArray(first) ? first[0] : first;
  if (typeof options === 'number' || typeof options === 'string') return Number(options);
  if (options && typeof options === 'object' && 'port' in options) return Number((options as { port: unknown }).port);
  return undefined;
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
  const port = portOf(args);
  if (port !== undefined && SERVICE_PORTS.has(port)) throw new Error(`a connection to port ${port} reaches a service: ${FIX}`);
  return (connect as (...rest: unknown[]) => net.Socket).apply(this, args);
} as typeof net.Socket.prototype.connect;
