/**
 * `sentinel-idp config check <file>`: loads the options of `createSentinel()` from a JSON file or a JavaScript
 * module and prints every problem at once, one `path: message` line each, so a misspelled option is found before
 * the service starts (and not one start-up failure at a time).
 */
import { access, readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { configProblems } from '../config.js';
import type { CLIIO } from './io.js';
import { UsageError } from './usage.js';

const COMMAND = 'config check';

/** Help text of `config check`. */
export const CONFIG_CHECK_HELP = `Usage: sentinel-idp config check <file>

Checks the options of createSentinel() without starting the service: every
unknown option (with the one probably meant), wrong value and inconsistent app
is printed on stdout as "path: problem", one per line. Exit code 0 when there
is none, 1 when there is any.

<file> is a JSON file (.json) or a JavaScript module (.js, .mjs, .cjs) whose
default export, or export named "options", is the options object. Functions and
stores in a module are checked for their shape only; nothing is called. For a
TypeScript module, run the CLI under tsx: npx tsx node_modules/sentinel-idp/dist/cli.js config check options.ts

Example:
  sentinel-idp config check ./sentinel.options.mjs
`;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

async function loadOptions(path: string): Promise<unknown> {
  const absolute = resolve(path);
  if (extname(absolute).toLowerCase() === '.json') {
    let text: string;
    try {
      text = await readFile(absolute, 'utf8');
    } catch {
      throw new Error(`cannot read ${path}`);
    }
    try {
      return JSON.parse(text);
    } catch {
      // Not the parser's message: it quotes the text around the error, which in an options file is often a secret
      // pasted without its quotes, and this goes to a terminal or a CI log.
      throw new Error(`${path} is not valid JSON (the parser's message is not shown: it may quote a secret)`);
    }
  }
  try {
    await access(absolute);
  } catch {
    throw new Error(`cannot read ${path}`);
  }
  const url = pathToFileURL(absolute).href;
  let module: Record<string, unknown>;
  try {
    module = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    // Where, and which kind of error, but not the message: an unquoted secret is "<the secret> is not defined".
    const at = error instanceof Error ? new RegExp(`${escapeRegExp(url)}:(\\d+)(?::(\\d+))?`).exec(error.stack ?? '') : null;
    const where = at === null ? '' : ` at line ${at[1]}${at[2] === undefined ? '' : `, column ${at[2]}`}`;
    const kind = error instanceof Error ? error.name : 'an error';
    throw new Error(`${path} could not be loaded: ${kind}${where} (its message is not shown: it may quote a secret)`);
  }
  // A CommonJS module's exports arrive as `default`; an ES module may name its export `options`. Node names a CommonJS
  // module's exports by reading its source, which misses `module.exports = { options: { … } }`: that object then
  // arrives whole as `default`, and its `options` is what the file means.
  const whole = module.default;
  const wrapped = isRecord(whole) && Object.hasOwn(whole, 'options') && !Object.hasOwn(whole, 'issuer') ? whole.options : undefined;
  const options = module.options ?? wrapped ?? whole;
  if (options === undefined) throw new Error(`${path} has no default export and no export named "options"`);
  return options;
}

/**
 * Runs `config check`: 0 when the options are accepted, 1 when any problem is printed.
 *
 * @example
 * process.exitCode = await runConfigCheck(['./sentinel.options.json'], io);
 */
export async function runConfigCheck(argv: readonly string[], io: CLIIO): Promise<number> {
  const [file, ...rest] = argv;
  if (file === '--help' || file === '-h') {
    io.stdout(CONFIG_CHECK_HELP);
    return 0;
  }
  if (file === undefined || file.startsWith('-') || rest.length > 0) {
    throw new UsageError('config check takes exactly one argument: the options file', COMMAND);
  }
  const problems = configProblems(await loadOptions(file));
  for (const { field, message } of problems) io.stdout(`${field}: ${message}\n`);
  if (problems.length === 0) io.stdout(`${file}: the options are valid\n`);
  else io.stderr(`${problems.length} problem${problems.length === 1 ? '' : 's'} in ${file}\n`);
  return problems.length === 0 ? 0 : 1;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
