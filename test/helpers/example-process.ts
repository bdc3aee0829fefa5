/**
 * Starts an example app the way its README says (`node --import tsx examples/<fw>/server.ts`), on a free port of
 * 127.0.0.1, and reads what a person would read from its start-up banner: the client page URL and the demo
 * user's credentials.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { startOnFreePort } from './free-port.js';

/** A running example. */
export interface RunningExample {
  framework: string;
  /** The client page, e.g. `http://127.0.0.1:41234`. */
  url: string;
  username: string;
  password: string;
  /** Everything the process printed so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * tsx compiles the example and the library's sources as they load. On 2 busy cores, with four examples and a
 * browser starting at once beside other test files, that once took more than 30 s; 50 s still fails inside the
 * 60 s hook timeout, with the output so far, rather than as a bare hook timeout.
 */
const START_TIMEOUT_MS = 50_000;

/** `demo user      demo / s3cret` → `['demo', 's3cret']`. */
function credentials(banner: string): [string, string] | null {
  const found = /^\s+demo user\s+(\S+) \/ (\S+)\s*$/m.exec(banner);
  return found?.[1] === undefined || found[2] === undefined ? null : [found[1], found[2]];
}

/**
 * Starts `examples/<framework>/server.ts` and resolves once its banner (which ends with the brand-tokens curl)
 * has been printed.
 * @example const app = await startExample('koa'); try { ... } finally { await app.stop(); }
 */
export function startExample(framework: string, extraEnv: Record<string, string> = {}): Promise<RunningExample> {
  // The example's issuer names its port, so the port is chosen before it starts (and again, should it be taken).
  return startOnFreePort((port) => startExampleOn(port, framework, extraEnv));
}

async function startExampleOn(port: number, framework: string, extraEnv: Record<string, string>): Promise<RunningExample> {
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', `examples/${framework}/server.ts`], {
    cwd: process.cwd(),
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ISSUER: url, NODE_ENV: 'test', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const stop = (): Promise<void> =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });

  const [username, password] = await new Promise<[string, string]>((resolve, reject) => {
    const onExit = (code: number | null): void => fail(`exited with ${code}`);
    const settle = (): void => {
      clearInterval(poll);
      clearTimeout(timer);
      child.off('exit', onExit);
    };
    const fail = (message: string): void => {
      settle();
      void stop().then(() => reject(new Error(`${framework} example ${message}:\n${output}`)));
    };
    const timer = setTimeout(() => fail(`did not print its banner within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    const poll = setInterval(() => {
      if (!output.includes('brand/tokens')) return;
      const found = credentials(output);
      if (found === null) return fail('printed no demo user credentials');
      settle();
      resolve(found);
    }, 50);
    child.once('exit', onExit);
  });
  return { framework, url, username, password, output: () => output, stop };
}

/** Examples started side by side; see {@link startExamples}. */
export interface ExampleStarts {
  /** The start of the example under `key` (rejects as its start did). */
  get(key: string): Promise<RunningExample>;
  /** Stops every example that started. */
  stopAll(): Promise<void>;
}

/**
 * Starts several examples at once: each start is a process of its own and mostly waiting, so a file that needs
 * three of them waits for the slowest rather than for all three in turn.
 *
 * @example
 * let starts: ExampleStarts;
 * beforeAll(() => { starts = startExamples({ express: { framework: 'express' } }); });
 * afterAll(() => starts.stopAll());
 * // in a nested describe: app = await starts.get('express');
 */
export function startExamples(specs: Record<string, { framework: string; env?: Record<string, string> }>): ExampleStarts {
  const starts = new Map<string, Promise<RunningExample>>();
  for (const [key, { framework, env }] of Object.entries(specs)) {
    const start = startExample(framework, env);
    // Whoever asks for it sees the failure; until then it must not count as an unhandled rejection.
    start.catch(() => {});
    starts.set(key, start);
  }
  return {
    get(key) {
      const start = starts.get(key);
      if (start === undefined) throw new Error(`no example started as ${key}`);
      return start;
    },
    async stopAll() {
      await Promise.all(
        [...starts.values()].map((start) =>
          start.then(
            (app) => app.stop(),
            () => undefined,
          ),
        ),
      );
    },
  };
}
