/**
 * The device-flow guide's CLI example (`examples/device/cli.ts`, `npm run example:device`) run as the guide says, in
 * its own process against a running service: it prints where to enter the code, a person approves (or denies) on the
 * verification pages, and the command says what came of it and exits accordingly, never printing a token.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { toExpress } from '../adapters/express/index.js';
import { createSentinel, DEVICE_CODE_GRANT } from '../src/index.js';
import { ACCOUNT, baseOptions, USER_ID } from './helpers/fixtures.js';
import { submitLogin } from './helpers/oidc.js';

const FORM = 'application/x-www-form-urlencoded';
const CLI_CLIENT_ID = 'acme-cli';
const open: { server: Server; child?: ChildProcess }[] = [];

afterEach(async () => {
  for (const { server, child } of open.splice(0)) {
    if (child?.pid !== undefined && child.exitCode === null) process.kill(-child.pid);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** The service on a loopback port whose issuer names that port (the CLI discovers everything from it). */
async function startService(): Promise<{ origin: string; issuer: string; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const options = baseOptions({ issuer: origin, deviceFlow: { interval: 1 }, logger: { warn: () => {} } });
  const sentinel = createSentinel({
    ...options,
    apps: [
      ...(options.apps ?? []),
      {
        accountId: ACCOUNT,
        clientId: CLI_CLIENT_ID,
        tokenEndpointAuthMethod: 'none',
        name: 'Acme CLI',
        grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'],
        scope: 'openid offline_access',
      },
    ],
  });
  const app = express();
  app.use(toExpress(sentinel));
  server.on('request', app);
  open.push({ server });
  return { origin, issuer: `${origin}/sentinel/api/account/${ACCOUNT}`, server };
}

/** Starts the CLI as the guide does (`npm run example:device`) and collects what it prints. */
function startCli(issuer: string): { child: ChildProcess; output: () => string; exit: Promise<number | null> } {
  // Its own process group, so that the test can end npm and the CLI under it together.
  const child = spawn('npm', ['run', '--silent', 'example:device'], {
    env: { ...process.env, SENTINEL_ISSUER: issuer, SENTINEL_DEVICE_CLIENT_ID: CLI_CLIENT_ID },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const last = open.at(-1);
  if (last !== undefined) last.child = child;
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { child, output: () => text, exit };
}

/** The person: the printed verification_uri_complete, the prefilled code, the sign-in, then approve or deny. */
async function personDecides(origin: string, completeUri: string, choice: 'approve' | 'deny'): Promise<void> {
  const browser = request.agent(origin);
  const entry = new URL(completeUri);
  const page = await browser.get(`${entry.pathname}${entry.search}`);
  const userCode = /name="user_code"[^>]* value="([^"]+)"/.exec(page.text)?.[1] ?? '';
  const csrfToken = /name="csrf_token" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
  const entered = await browser
    .post(entry.pathname)
    .set('content-type', FORM)
    .set('sec-fetch-site', 'same-origin')
    .send(new URLSearchParams({ csrf_token: csrfToken, user_code: userCode }).toString());
  expect(entered.status).toBe(303);
  const toConfirm = await submitLogin(browser, entered.headers.location as string);
  const confirm = await browser.get(toConfirm.headers.location as string);
  expect(confirm.text).toContain('Acme CLI');
  const field = (name: string): string => new RegExp(`name="${name}" value="([^"]+)"`).exec(confirm.text)?.[1] ?? '';
  const decided = await browser
    .post(`${entry.pathname}/confirm`)
    .set('content-type', FORM)
    .set('sec-fetch-site', 'same-origin')
    .send(new URLSearchParams({ confirmation: field('confirmation'), csrf_token: field('csrf_token'), [choice]: '1' }).toString());
  expect(decided.status).toBe(200);
}

/** Waits for the line with verification_uri_complete and returns that URL. */
async function printedCompleteUri(output: () => string): Promise<string> {
  let uri = '';
  await vi.waitFor(
    () => {
      uri = /^or open (\S+)$/m.exec(output())?.[1] ?? '';
      expect(uri, output()).not.toBe('');
    },
    { timeout: 30_000, interval: 100 },
  );
  return uri;
}

describe('the device-flow CLI example', () => {
  it('prints the code and where to enter it, and says who signed in once the person approves', async () => {
    const { origin, issuer } = await startService();
    const cli = startCli(issuer);
    const complete = await printedCompleteUri(cli.output);
    expect(cli.output()).toMatch(
      new RegExp(`^To sign in, open ${origin}/sentinel/api/account/${ACCOUNT}/device and enter the code [A-Z]{4}-[A-Z]{4}$`, 'm'),
    );
    await personDecides(origin, complete, 'approve');
    expect(await cli.exit, cli.output()).toBe(0);
    expect(cli.output()).toMatch(
      new RegExp(`^Signed in as ${USER_ID}: scope "openid offline_access", expires in \\d+ s, with a refresh token\\.$`, 'm'),
    );
    // Nothing of a token reaches the terminal.
    expect(cli.output()).not.toMatch(/eyJ|device_code|refresh_token/);
  }, 60_000);

  it('says the sign-in was declined, and exits 1, when the person denies', async () => {
    const { origin, issuer } = await startService();
    const cli = startCli(issuer);
    await personDecides(origin, await printedCompleteUri(cli.output), 'deny');
    expect(await cli.exit, cli.output()).toBe(1);
    expect(cli.output()).toMatch(/^Not signed in \(access_denied\): The sign-in was declined in the browser\. Nothing was granted\.$/m);
  }, 60_000);

  it('refuses an http issuer that is not on this machine before sending anything', async () => {
    const { deviceSignIn } = await import('../examples/device/cli.js');
    const said: string[] = [];
    const result = await deviceSignIn({
      issuer: new URL('http://id.example.com/x'),
      clientId: CLI_CLIENT_ID,
      say: (line) => said.push(line),
    });
    expect(result).toEqual({ ok: false, error: 'invalid_issuer', message: 'The issuer must be https (http only on localhost).' });
    expect(said).toEqual([]);
  });
});
