/**
 * `sentinel-idp token` prints what a remote server said: its OAuth error on stderr, its token response on stdout.
 * The server may be hostile (a mistyped or hijacked `--issuer`), so nothing it sends may reach the terminal as a
 * control sequence. A real HTTP server on loopback answers with one; the command runs in-process.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CLIIO } from '../src/cli/io.js';
import { runToken, SECRET_VARIABLE } from '../src/cli/token.js';

/** ESC (a CSI that clears the screen), CSI U+009B, a carriage return and newline, a bidi override, DEL, BEL. */
const HOSTILE = 'x\u001b[2J\u009b31m\r\nsentinel-idp: all good\u202e\u007f\u0007';
let server: Server;
let issuer: string;
let answer: { status: number; body: unknown } = { status: 400, body: {} };

beforeAll(async () => {
  server = createServer((_request, response) => {
    response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

async function run(): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CLIIO = {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env: { [SECRET_VARIABLE]: 'secret' },
    readSecret: async () => null,
  };
  const argv = ['--issuer', issuer, '--account', '123456', '--client-id', 'app', '--consumer', 'consumer'];
  const code = await runToken(argv, io);
  return { code, stdout, stderr };
}

/** Whether `text` holds a character a terminal may act on, beyond the one newline that ends each line printed. */
function hasControl(text: string): boolean {
  return /[\p{Cc}\u202a-\u202e\u2066-\u2069]/u.test(text.replace(/\n$/, ''));
}

describe('sentinel-idp token with a hostile server', () => {
  it("escapes control characters of the server's error and error_description on stderr", async () => {
    answer = { status: 400, body: { error: `invalid_client${HOSTILE}`, error_description: `nope${HOSTILE}` } };
    const result = await run();
    expect(result.code).toBe(1);
    expect(hasControl(result.stderr)).toBe(false);
    expect(result.stderr).toContain('invalid_clientx\\u001b[2J\\u009b31m\\u000d\\u000asentinel-idp: all good\\u202e\\u007f\\u0007');
    expect(result.stderr.split('\n')).toHaveLength(2);
  });

  it("caps what it prints of the server's error and error_description, escapes never split, and says so", async () => {
    const description = 'y'.repeat(2_000_000);
    // 300 ESCs escape to 1800 characters: 166 escapes (996 characters) fit, and no part of a 167th is printed.
    answer = { status: 400, body: { error: '\u001b'.repeat(300), error_description: description } };
    const result = await run();
    expect(result.code).toBe(1);
    expect(hasControl(result.stderr)).toBe(false);
    expect(result.stderr).toBe(
      `sentinel-idp token: the service refused the request (HTTP 400) ${'\\u001b'.repeat(166)}… [134 more characters cut]: ` +
        `${'y'.repeat(1000)}… [1999000 more characters cut]\n`,
    );
  });

  it('prints a server error of exactly the cap whole, with no marker', async () => {
    answer = { status: 400, body: { error: 'invalid_client', error_description: 'z'.repeat(1000) } };
    const result = await run();
    expect(result.stderr).toBe(`sentinel-idp token: the service refused the request (HTTP 400) invalid_client: ${'z'.repeat(1000)}\n`);
  });

  it('escapes in the printed token response what JSON leaves raw, and it still parses to what was sent', async () => {
    const body = { access_token: `token${HOSTILE}`, token_type: 'Bearer', expires_in: 3600 };
    answer = { status: 200, body };
    const result = await run();
    expect(result.code).toBe(0);
    expect(hasControl(result.stdout.replace(/\n/g, ''))).toBe(false);
    expect(JSON.parse(result.stdout)).toEqual(body);
  });

  it('reads no more of an answer than 4 MiB, and exits 1 saying so', async () => {
    // Still a token response that parses: only its size is wrong. A server sending without end is the case meant.
    const body = { access_token: 't'.repeat(4 * 1024 * 1024), token_type: 'Bearer', expires_in: 3600 };
    answer = { status: 200, body };
    const result = await run();
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`sentinel-idp token: the service answered HTTP 200 with more than 4194304 bytes; not read\n`);
  });
});
