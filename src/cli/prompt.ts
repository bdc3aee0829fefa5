/**
 * A hidden prompt for the client secret. The secret is never a command-line argument (RFC 6749 §10.3 asks to keep
 * credentials confidential; argv shows up in `ps` output and shell history), so on a terminal we ask for it
 * without echoing what is typed.
 */
import type { ReadStream } from 'node:tty';

const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const BACKSPACE = new Set(['\u007f', '\b']);

/**
 * Asks for a secret on the terminal without echo. Resolves `null` when stdin is not a terminal or the user gives up
 * (Ctrl-C, Ctrl-D).
 *
 * @example
 * const secret = await promptHidden('Client secret: ', process.stdin, process.stderr);
 */
export function promptHidden(prompt: string, input: NodeJS.ReadStream, output: NodeJS.WriteStream): Promise<string | null> {
  if (!input.isTTY) return Promise.resolve(null);
  const terminal = input as NodeJS.ReadStream & ReadStream;
  return new Promise((resolve) => {
    let typed = '';
    const finish = (value: string | null): void => {
      terminal.off('data', onData);
      terminal.setRawMode(false);
      terminal.pause();
      output.write('\n');
      resolve(value);
    };
    const onData = (chunk: Buffer | string): void => {
      for (const character of chunk.toString('utf8')) {
        if (character === '\r' || character === '\n') {
          finish(typed);
          return;
        }
        if (character === CTRL_C || character === CTRL_D) {
          finish(null);
          return;
        }
        if (BACKSPACE.has(character)) typed = typed.slice(0, -1);
        else if (character >= ' ') typed += character;
      }
    };
    output.write(prompt);
    terminal.setRawMode(true);
    terminal.resume();
    terminal.on('data', onData);
  });
}
