/**
 * Argument handling shared by every CLI command: a usage error type (exit code 2) and a strict `parseArgs`
 * wrapper whose messages never echo argument values, because a mistyped command line may hold a secret.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ACCOUNT_ID_RULE, isAccountId } from '../lib/account-id.js';

/** Exit code for a command line that cannot be run as written (the BSD `EX_USAGE` convention of 2 is common). */
export const USAGE_EXIT_CODE = 2;

/**
 * A command line that cannot be run as written; `main` prints it on stderr and exits with {@link USAGE_EXIT_CODE}.
 *
 * @example
 * throw new UsageError('--account is required', 'apps register');
 */
export class UsageError extends Error {
  /** The command whose `--help` the message points to, e.g. `apps register`. */
  readonly command: string;

  constructor(message: string, command: string) {
    super(message);
    this.name = 'UsageError';
    this.command = command;
  }
}

/** The option table of one command, as `node:util` `parseArgs` takes it. */
export type OptionTable = NonNullable<ParseArgsConfig['options']>;

/** Parsed values: strings, repeated strings, booleans. */
export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

// Node's parseArgs refuses `--kid -x` as ambiguous, yet a value may begin with a dash: an RFC 7638 thumbprint
// (the default kid) is base64url, so one in 64 starts with "-". A dashed token after a string option is its value
// unless it names an option of the table, so `--kid --redis` still reads as a missing value.
function joinDashedValues(argv: readonly string[], options: OptionTable): string[] {
  const names = new Set<string>();
  for (const [name, option] of Object.entries(options)) {
    names.add(`--${name}`);
    if (option.short !== undefined) names.add(`-${option.short}`);
  }
  const joined: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index] as string;
    const next = argv[index + 1];
    const name = token.startsWith('--') ? token.slice(2) : '';
    const option = Object.hasOwn(options, name) ? options[name] : undefined;
    if (option?.type === 'string' && next !== undefined && next.startsWith('-') && next !== '--' && !names.has(next)) {
      joined.push(`${token}=${next}`);
      index += 1;
    } else {
      joined.push(token);
    }
  }
  return joined;
}

function optionName(message: string): string {
  const found = /'(-{1,2}[A-Za-z0-9-]+)/.exec(message);
  return found?.[1] ?? 'an option';
}

/**
 * Parses `argv` strictly against `options` (no positional arguments).
 *
 * @example
 * const values = parseArguments(['--alg', 'EdDSA'], { alg: { type: 'string' } }, 'keys generate');
 */
export function parseArguments(argv: readonly string[], options: OptionTable, command: string): OptionValues {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: joinDashedValues(argv, options), options, strict: true, allowPositionals: false, tokens: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : '';
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      throw new UsageError('unexpected argument: this command takes options only', command);
    }
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`unknown option ${optionName(message)}`, command);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const name = optionName(message);
      throw new UsageError(
        /does not take an argument/.test(message) ? `option ${name} does not take a value` : `option ${name} needs a value`,
        command,
      );
    }
    throw new UsageError('the arguments could not be parsed', command);
  }
  // parseArgs keeps the last of a repeated single-value option; a silent pick hides mistakes, so refuse it.
  const seen = new Set<string>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option' || options[token.name]?.multiple === true) continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} may be given only once`, command);
    seen.add(token.name);
  }
  return parsed.values as OptionValues;
}

/**
 * The single string value of a required option; refuses a repeated or missing one.
 *
 * @example
 * const account = requireString(values, 'account', 'token');
 */
export function requireString(values: OptionValues, name: string, command: string): string {
  const value = optionalString(values, name, command);
  if (value === undefined) throw new UsageError(`--${name} is required`, command);
  return value;
}

/**
 * The single string value of an optional option, or `undefined`; an empty value counts as a mistake.
 *
 * @example
 * const alg = optionalString(values, 'alg', 'keys generate') ?? 'ES256';
 */
export function optionalString(values: OptionValues, name: string, command: string): string | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw new UsageError(`--${name} may be given only once`, command);
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} needs a non-empty value`, command);
  return value;
}

/**
 * The `--account` of a command, refused as a usage error when it could not be one path segment of the service's URLs.
 *
 * @example
 * const accountId = requireAccountId(values, 'token');
 */
export function requireAccountId(values: OptionValues, command: string): string {
  const accountId = requireString(values, 'account', command);
  // The service's own check (src/lib/account-id.ts): an id the CLI accepts is one every endpoint accepts.
  if (!isAccountId(accountId)) throw new UsageError(`--account must be ${ACCOUNT_ID_RULE}`, command);
  return accountId;
}

/**
 * Whether a store URL given on the command line carries a password: in its userinfo, or as the `password` query
 * parameter, which both drivers read as well (ioredis and pg take every query parameter as an option). A URL that
 * does not parse is left to the driver to refuse.
 *
 * @example carriesPassword('postgres://idp@db.example.com/idp?password=…') // true
 */
export function carriesPassword(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.password !== '' || (parsed.searchParams.get('password') ?? '') !== '';
  } catch {
    return false;
  }
}
