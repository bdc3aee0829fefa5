/**
 * The hidden secret prompt of the CLI, on a fake terminal: nothing typed is echoed, Enter ends, Backspace edits,
 * Ctrl-C gives up, and without a terminal it does not ask at all.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { promptHidden } from '../src/cli/prompt.js';

interface FakeTerminal {
  input: NodeJS.ReadStream;
  output: NodeJS.WriteStream;
  written: () => string;
  rawModes: boolean[];
  type: (text: string) => void;
}

function fakeTerminal(isTTY = true): FakeTerminal {
  const input = new PassThrough() as PassThrough & { isTTY?: boolean; setRawMode?: (mode: boolean) => void };
  const rawModes: boolean[] = [];
  input.isTTY = isTTY;
  input.setRawMode = (mode) => {
    rawModes.push(mode);
  };
  const chunks: string[] = [];
  const output = { write: (text: string) => chunks.push(text) > 0 };
  return {
    input: input as unknown as NodeJS.ReadStream,
    output: output as unknown as NodeJS.WriteStream,
    written: () => chunks.join(''),
    rawModes,
    type: (text) => input.write(text),
  };
}

describe('promptHidden', () => {
  it('reads up to Enter without echoing, in raw mode, and restores the terminal', async () => {
    const terminal = fakeTerminal();
    const answer = promptHidden('Client secret: ', terminal.input, terminal.output);
    terminal.type('s3cr');
    terminal.type('et\r');
    await expect(answer).resolves.toBe('s3cret');
    expect(terminal.written()).toBe('Client secret: \n');
    expect(terminal.rawModes).toEqual([true, false]);
  });

  it('applies Backspace and ignores other control characters', async () => {
    const terminal = fakeTerminal();
    const answer = promptHidden('> ', terminal.input, terminal.output);
    terminal.type('abx\u007fc\u001b\n');
    await expect(answer).resolves.toBe('abc');
  });

  it('gives up on Ctrl-C and Ctrl-D', async () => {
    for (const key of ['\u0003', '\u0004']) {
      const terminal = fakeTerminal();
      const answer = promptHidden('> ', terminal.input, terminal.output);
      terminal.type(`half${key}`);
      await expect(answer).resolves.toBeNull();
      expect(terminal.rawModes).toEqual([true, false]);
    }
  });

  it('does not ask without a terminal', async () => {
    const terminal = fakeTerminal(false);
    await expect(promptHidden('> ', terminal.input, terminal.output)).resolves.toBeNull();
    expect(terminal.written()).toBe('');
    expect(terminal.rawModes).toEqual([]);
  });
});
