/**
 * `sentinel-idp token`: fetches a consumer-bound access token (platform-operations.md §4.1; RFC 6749 §4.4 client credentials
 * with the consumer participant id in `state`). The client secret comes from the environment or a hidden prompt,
 * never from an argument (RFC 6749 §2.3.1: credentials stay out of URLs and, here, out of process listings).
 */
import type { CLIIO } from './io.js';
import { terminalJSON, terminalTextCapped } from './terminal-text.js';
import { optionalString, parseArguments, requireAccountId, requireString, UsageError } from './usage.js';
import { routeUrl } from '../http/route-paths.js';

const COMMAND = 'token';
/** Environment variable the secret is read from. */
export const SECRET_VARIABLE = 'SENTINEL_CLIENT_SECRET';
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const TIMEOUT_MS = 30_000;
/**
 * The most of an answer the command reads. A token response or an OAuth error is a few hundred bytes; a server that
 * sends without end (a hostile or broken one) would otherwise fill the operator's memory until the timeout.
 */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** Help text of `token`. */
export const TOKEN_HELP = `Usage: sentinel-idp token --issuer <url> --account <id> --client-id <id> --consumer <id> [--base-path /sentinel]

Requests a consumer-bound access token with the client credentials grant:
  POST {issuer}{base-path}/api/v2/account/{account}/app/token?state={consumer}
and prints the JSON response (access_token, token_type, expires_in) on stdout.

The client secret is read from the ${SECRET_VARIABLE} environment variable,
or asked for without echo when run in a terminal. It is never accepted as an
argument: arguments are visible to other users in process lists and shell history.

Options:
  --issuer <url>       the service's issuer, e.g. https://id.example.com (https;
                       http only for localhost)
  --account <id>       platform account (site) id
  --client-id <id>     the application's client id (installation id)
  --consumer <id>      consumer participant id the token is bound to
  --base-path <path>   the service's basePath (default /sentinel)
  -h, --help           show this help

Exit codes: 0 token printed, 1 the service refused or could not be reached,
2 bad arguments or no secret.

Example:
  ${SECRET_VARIABLE}=… sentinel-idp token --issuer https://id.example.com \\
    --account 123456 --client-id 6f1c0b7e-… --consumer 0b3f6a2e-8c1d-4e5f-9a7b-1c2d3e4f5a6b
`;

const SECRET_FLAGS = /^--?(client[-_]?secret|secret)(=|$)/i;

function issuerURL(issuer: string): URL {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new UsageError('--issuer must be an absolute URL such as https://id.example.com', COMMAND);
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new UsageError('--issuer must not have a query, a fragment or userinfo', COMMAND);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) {
    throw new UsageError('--issuer must use https (http only for localhost): the secret travels in the request', COMMAND);
  }
  return url;
}

/**
 * The token endpoint URL for the given issuer, base path, account and consumer.
 *
 * @example
 * tokenEndpoint('https://id.example.com', '/sentinel', '123456', consumerId)
 * // https://id.example.com/sentinel/api/v2/account/123456/app/token?state=…
 */
export function tokenEndpoint(issuer: string, basePath: string, accountId: string, consumerId: string): string {
  const url = issuerURL(issuer);
  const prefix = url.pathname.replace(/\/+$/, '');
  return `${routeUrl({ issuer: `${url.origin}${prefix}`, basePath }, 'app-token-v2', { accountId })}?state=${encodeURIComponent(consumerId)}`;
}

async function readSecret(io: CLIIO): Promise<string> {
  const fromEnvironment = io.env[SECRET_VARIABLE];
  if (fromEnvironment !== undefined && fromEnvironment !== '') return fromEnvironment;
  const typed = await io.readSecret('Client secret: ');
  if (typed === null || typed === '') {
    throw new UsageError(`no client secret: set ${SECRET_VARIABLE} or run in a terminal to be asked for it`, COMMAND);
  }
  return typed;
}

function describeFailure(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; error_description?: unknown };
    if (typeof body.error === 'string') {
      // The server's words, escaped and capped: a hostile or compromised one must neither drive the operator's
      // terminal nor flood it (or a log collecting stderr) with megabytes.
      const description = typeof body.error_description === 'string' ? `: ${terminalTextCapped(body.error_description)}` : '';
      return `the service refused the request (HTTP ${status}) ${terminalTextCapped(body.error)}${description}`;
    }
  } catch {
    // Not JSON (a proxy's error page, say): the status alone is what we can report.
  }
  return `the service answered HTTP ${status} without an OAuth error body`;
}

/** The body of `response` as text, or `null` (the rest left unread) once it passes {@link MAX_RESPONSE_BYTES}. */
async function cappedText(response: Response): Promise<string | null> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks).toString('utf8');
    size += value.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
}

/**
 * Runs `token`; returns the exit code.
 *
 * @example
 * await runToken(['--issuer', 'https://id.example.com', '--account', '123456', '--client-id', id, '--consumer', consumer], io);
 */
export async function runToken(argv: readonly string[], io: CLIIO): Promise<number> {
  if (argv.some((argument) => SECRET_FLAGS.test(argument))) {
    throw new UsageError(
      `the client secret is never accepted as an argument (arguments show up in process lists and shell history); set ${SECRET_VARIABLE} or let the command ask for it`,
      COMMAND,
    );
  }
  const values = parseArguments(
    argv,
    {
      issuer: { type: 'string' },
      account: { type: 'string' },
      'client-id': { type: 'string' },
      consumer: { type: 'string' },
      'base-path': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    COMMAND,
  );
  if (values.help === true) {
    io.stdout(TOKEN_HELP);
    return 0;
  }
  const issuer = requireString(values, 'issuer', COMMAND);
  const accountId = requireAccountId(values, COMMAND);
  const clientId = requireString(values, 'client-id', COMMAND);
  const consumerId = requireString(values, 'consumer', COMMAND);
  const basePath = optionalString(values, 'base-path', COMMAND) ?? '/sentinel';
  if (!/^\/[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/.test(basePath)) {
    throw new UsageError('--base-path must start with "/" and not end with "/"', COMMAND);
  }
  const endpoint = tokenEndpoint(issuer, basePath, accountId, consumerId);
  const clientSecret = await readSecret(io);

  let response: Response;
  try {
    response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    const reason = error instanceof Error && error.name === 'TimeoutError' ? 'timed out' : 'failed';
    io.stderr(`sentinel-idp token: the request to ${new URL(endpoint).origin} ${reason}\n`);
    return 1;
  }
  const text = await cappedText(response);
  if (text === null) {
    io.stderr(`sentinel-idp token: the service answered HTTP ${response.status} with more than ${MAX_RESPONSE_BYTES} bytes; not read\n`);
    return 1;
  }
  if (!response.ok) {
    io.stderr(`sentinel-idp token: ${describeFailure(response.status, text)}\n`);
    return 1;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    io.stderr('sentinel-idp token: the service answered 200 with a body that is not JSON\n');
    return 1;
  }
  io.stdout(`${terminalJSON(body)}\n`);
  return 0;
}
