/**
 * The runner's side of bench/server.ts: one target in a child process with an IPC channel (ready, CPU over a window,
 * close), shared by the bench runners (bench/run.ts, bench/independent.ts). Children are tracked and always killed:
 * on exit, on SIGINT/SIGTERM/SIGHUP, and by killAll().
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { JWK } from 'jose';
import { HOST } from './fixtures.js';

const serverScript = fileURLToPath(new URL('./server.ts', import.meta.url));

const children = new Set<ChildProcess>();
export function killAll(): void {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
}
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    killAll();
    process.exit(130);
  });
}

export type ChildMessage =
  | { type: 'ready' }
  | { type: 'failed'; error: string }
  | { type: 'cpu-started' }
  | { type: 'cpu'; userUs: number; systemUs: number; rss: number };

export class ServerChild {
  readonly #child: ChildProcess;
  readonly #waiters: Array<{ type: string; resolve: (m: ChildMessage) => void; reject: (e: Error) => void }> = [];
  #exited: string | undefined;

  constructor(module: string, port: number, privateJwk: JWK) {
    this.#child = fork(serverScript, [module, String(port)], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, BENCH_PRIVATE_JWK: JSON.stringify(privateJwk), NODE_ENV: 'production' },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    children.add(this.#child);
    let stderr = '';
    this.#child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    this.#child.on('message', (message: ChildMessage) => {
      if (message.type === 'failed') {
        this.#fail(message.error);
        return;
      }
      const index = this.#waiters.findIndex((w) => w.type === message.type);
      if (index !== -1) this.#waiters.splice(index, 1)[0]?.resolve(message);
    });
    this.#child.on('exit', (code, signal) => {
      children.delete(this.#child);
      const tail = stderr.trim().split('\n').slice(-3).join(' | ');
      this.#fail(`server exited (${signal ?? code})${tail ? `: ${tail}` : ''}`);
    });
  }

  #fail(reason: string): void {
    this.#exited ??= reason;
    for (const waiter of this.#waiters.splice(0)) waiter.reject(new Error(reason));
  }

  wait(type: ChildMessage['type'], timeoutMs: number): Promise<ChildMessage> {
    if (this.#exited !== undefined) return Promise.reject(new Error(this.#exited));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not answer '${type}' within ${timeoutMs} ms`)), timeoutMs);
      this.#waiters.push({
        type,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
  }

  async request(type: 'cpu-start' | 'cpu-stop', reply: ChildMessage['type']): Promise<ChildMessage> {
    const waiting = this.wait(reply, 10_000);
    this.#child.send({ type });
    return waiting;
  }

  async close(): Promise<void> {
    if (this.#exited !== undefined || !this.#child.connected) {
      this.#child.kill('SIGKILL');
      return;
    }
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
    this.#child.send({ type: 'close' });
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
