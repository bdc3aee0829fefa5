/**
 * The command line's input and output captured in strings, for running a CLI command in process.
 */
import type { CLIIO } from '../../src/cli/io.js';

/**
 * An empty environment, no secret to read, and everything written kept in `out` and `err`.
 * @example const out = capturedIO(); await runSessionsList(args, out); expect(out.out).toContain(sid);
 */
export function capturedIO(): CLIIO & { out: string; err: string } {
  const captured = {
    out: '',
    err: '',
    env: {},
    stdout(text: string) {
      captured.out += text;
    },
    stderr(text: string) {
      captured.err += text;
    },
    readSecret: async () => null,
  };
  return captured;
}
