/**
 * The built package for the tests that run it (the CLI and the packed tarball): builds `dist/` when it is missing or
 * older than the sources. The check and the build run under one `flock`, because test files run in parallel and a
 * second build empties `dist/` under the feet of the first one's tests.
 */
import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The built CLI. */
export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

// Runs inside the lock: newest source mtime vs the build's oldest output; build when stale.
const BUILD_IF_STALE = `
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');
const { execFileSync } = require('node:child_process');
const newest = (path) => {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
};
const sources = ['src', 'adapters', 'tsup.config.ts', 'package.json', 'tsconfig.json'].filter((p) => existsSync(p));
const outputs = ['dist/cli.js', 'dist/index.js', 'dist/index.cjs', 'dist/index.d.ts'];
const built = outputs.every((p) => existsSync(p)) ? Math.min(...outputs.map((p) => statSync(p).mtimeMs)) : 0;
if (built <= Math.max(...sources.map(newest))) {
  execFileSync(process.platform === 'win32' ? 'npx.cmd' : 'npx', ['tsup'], { stdio: ['ignore', 'ignore', 'inherit'] });
}
`;

function hasFlock(): boolean {
  try {
    execFileSync('flock', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes sure `dist/` holds a build of the current sources.
 *
 * @example
 * beforeAll(() => ensureBuilt(), 180_000);
 */
export function ensureBuilt(): void {
  const node = [process.execPath, '--input-type=commonjs', '-e', BUILD_IF_STALE];
  const [command, ...args] = hasFlock() ? ['flock', '/tmp/sentinel-idp-build.lock', ...node] : node;
  execFileSync(command as string, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], timeout: 170_000 });
}

/** What a run of the built CLI left: its exit code (-1 when it was killed) and its two streams. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI without a terminal (stdin closed at once, 30 s at most) and resolves however it ends, so a test
 * asserts the exit code rather than catching.
 *
 * @example
 * const { code, stderr } = await runCli(['keys', 'rotate', '--redis', url], { ...process.env, SENTINEL_KEY_ENCRYPTION_KEY: key });
 */
export function runCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], { env, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
    child.stdin?.end();
  });
}
