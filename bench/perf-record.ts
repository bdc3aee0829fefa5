/**
 * Linux `perf` over one thread of a bench server, for bench/flow-profile.ts (BENCH_PERF=<file>).
 *
 * Why besides the inspector's profile: V8's sampler records the JavaScript stack on a wall-clock tick, so time the
 * main thread spends off the CPU inside a native call (preempted by the pool thread it just woke, on two shared
 * cores) is charged to that call. `perf` counts cycles on the CPU only, native frames included; with
 * `--perf-basic-prof` on the server, JIT-compiled functions have names too.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';

/**
 * Node flags the profiled server needs so that perf can name JIT-compiled functions. Code space compaction is off:
 * code moved by a full GC would otherwise leave perf's map naming an address after whatever compiled there first.
 * The V8 log the flag switches on goes nowhere (it would land as isolate-*.log files in the working directory).
 */
export const PERF_NODE_FLAGS = ['--perf-basic-prof', '--no-compact-code-space', '--logfile=/dev/null', '--no-logfile-per-isolate'];

/**
 * Records `seconds` of the thread `tid` (a process's main thread has the process id) into `file`.
 * @example const recording = startPerf(child.pid, 8, '/tmp/exchange.perf'); …; await recording;
 */
export function startPerf(tid: number, seconds: number, file: string): Promise<void> {
  const perf: ChildProcess = spawn('perf', ['record', '-F', '999', '-g', '-t', String(tid), '-o', file, '--', 'sleep', String(seconds)], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    perf.once('error', (error) => reject(new Error(`perf could not be started (is it installed?): ${error.message}`)));
    perf.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`perf record exited with ${code}`))));
  });
}

function report(file: string, args: string[]): string[] {
  const output = execFileSync('perf', ['report', '-i', file, '--stdio', '-g', 'none', ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    maxBuffer: 64 * 1024 * 1024,
  });
  return output.split('\n').filter((line) => /^\s+\d/.test(line));
}

/**
 * Prints where the thread's CPU went: by binary (node, JIT code, kernel, libc), the top symbols by self time, and the
 * JavaScript functions by time including what they call.
 */
export function printPerfReport(file: string): void {
  console.log(`perf: ${file}\nby binary:\n${report(file, ['--no-children', '--sort', 'dso']).slice(0, 8).join('\n')}`);
  console.log(`by symbol (self):\n${report(file, ['--no-children', '--sort', 'sym']).slice(0, 30).join('\n')}`);
  const js = report(file, ['--children', '--sort', 'sym']).filter((line) => line.includes('JS:'));
  console.log(`JavaScript functions (with what they call):\n${js.slice(0, 30).join('\n')}`);
}
