/**
 * The real process's side of {@link CLIIO}: its streams, environment and terminal, and what happens when the reader
 * of its output goes away (`sentinel-idp keys list | head -1`, a script that exits early).
 *
 * Node reports a write to a closed pipe as an `'error'` event on the stream (EPIPE), emitted later than the write;
 * nobody listening, it crashes the process with a stack trace. A CLI killed by SIGPIPE exits silently and non-zero;
 * here the command runs to its end (a rotation half-reported must still finish its store work), what it still writes
 * to the closed stream is dropped, and the run exits 1 with one line on stderr: output that a script never received
 * (a new client secret, printed once) must not pass for success.
 */
import type { CLIIO } from './io.js';
import { promptHidden } from './prompt.js';

/** What {@link processIO} uses of `process` (passed in, so that a test can hand it streams of its own). */
export interface ProcessStreams {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  env: NodeJS.ProcessEnv;
}

/** The run's IO, and whether its output was lost to a reader that went away (the run then exits 1). */
export interface ProcessIO {
  io: CLIIO;
  outputLost(): boolean;
  /**
   * Resolves once what was written so far has left for both streams (or a stream is gone) and the events of a
   * reader that went away have been heard: the moment the run may exit without losing output.
   */
  flushed(): Promise<void>;
}

const LOST_OUTPUT = 'sentinel-idp: the output was not all written: its reader closed the pipe\n';

/**
 * The IO of a run over `streams`; a write to an output whose reader is gone is dropped and noted, not thrown.
 * @example const { io, outputLost } = processIO(process); const code = await main(argv, io); process.exitCode = outputLost() ? 1 : code;
 */
export function processIO(streams: ProcessStreams): ProcessIO {
  let lost = false;
  const closed = new Set<NodeJS.WriteStream>();
  const watch = (stream: NodeJS.WriteStream): void => {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      // Any other failure of a standard stream is not the reader leaving: it stays what it was, an uncaught error.
      if (error.code !== 'EPIPE') throw error;
      closed.add(stream);
      if (!lost && stream === streams.stdout && !closed.has(streams.stderr)) streams.stderr.write(LOST_OUTPUT);
      lost = true;
    });
  };
  watch(streams.stdout);
  watch(streams.stderr);
  const write = (stream: NodeJS.WriteStream, text: string): void => {
    if (!closed.has(stream) && !stream.destroyed) stream.write(text);
  };
  return {
    io: {
      stdout: (text) => write(streams.stdout, text),
      stderr: (text) => write(streams.stderr, text),
      env: streams.env,
      readSecret: (prompt) => promptHidden(prompt, streams.stdin, streams.stderr),
    },
    outputLost: () => lost,
    flushed: async () => {
      await Promise.all([streams.stdout, streams.stderr].map(written));
      // A failed write's callback runs before its 'error' event, which comes on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

/** Resolves when everything written to `stream` so far has been handed to the system, or it cannot be. */
function written(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    stream.write('', () => resolve());
  });
}
