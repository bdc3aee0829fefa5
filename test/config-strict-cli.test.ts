/**
 * `sentinel-idp config check <file>`, the built CLI run as a child process: every problem of an options file at
 * once, one line each with its path, exit code 1 when there is any and 0 when there is none.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt, runCli } from './helpers/dist.js';

const cli = (args: string[]) => runCli(args);

const directory = mkdtempSync(join(tmpdir(), 'sentinel-config-check-'));
const file = (name: string, text: string): string => {
  const path = join(directory, name);
  writeFileSync(path, text);
  return path;
};

const APP = { accountId: '123456', clientId: 'nightly', clientSecret: 'a-secret-of-the-test', grantTypes: ['client_credentials'] };

beforeAll(() => ensureBuilt(), 180_000);
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('sentinel-idp config check', () => {
  it('prints three lines for a file with three mistakes, and exits 1', async () => {
    const path = file(
      'three.json',
      JSON.stringify({
        issuer: 'https://id.example.com',
        pkec: 'required',
        session: { idelTtl: 60 },
        apps: [APP, APP, { ...APP, clientId: 'web', grantTypes: ['authorization_code'], redirectUri: ['https://app.example.com/cb'] }],
      }),
    );
    const run = await cli(['config', 'check', path]);
    expect(run.code).toBe(1);
    expect(run.stdout.trimEnd().split('\n')).toEqual([
      'apps[2].redirectUri: unknown option "redirectUri" — did you mean "redirectUris"?',
      'session.idelTtl: unknown option "idelTtl" — did you mean "idleTtl"?',
      'pkec: unknown option "pkec" — did you mean "pkce"?',
    ]);
    expect(run.stderr).toBe(`3 problems in ${path}\n`);
    expect(run.stdout + run.stderr).not.toContain(APP.clientSecret);
  });

  it('checks a JavaScript module with functions, and lists problems past the schema (each app)', async () => {
    const path = file(
      'options.mjs',
      `export default {
        issuer: 'https://id.example.com',
        users: { authenticate: async () => null },
        apps: [
          { accountId: '1', clientId: 'a', clientSecret: 'x', redirectUris: ['http://evil.example/cb'] },
          { accountId: '1', clientId: 'b', tokenEndpointAuthMethod: 'none', grantTypes: ['client_credentials'], redirectUris: ['https://b.example/cb'] },
        ],
      };`,
    );
    const run = await cli(['config', 'check', path]);
    expect(run.code).toBe(1);
    expect(run.stdout.trimEnd().split('\n')).toEqual([
      'apps[0].redirectUris[0]: must use https (http is allowed only for loopback hosts)',
      'apps[1].grantTypes: a public client (tokenEndpointAuthMethod none) cannot use client_credentials',
    ]);
  });

  it('exits 0 for valid options', async () => {
    const path = file('valid.json', JSON.stringify({ issuer: 'https://id.example.com', pkce: 'required', apps: [APP] }));
    const run = await cli(['config', 'check', path]);
    expect(run).toEqual({ code: 0, stdout: `${path}: the options are valid\n`, stderr: '' });
  });

  it('reads the options a CommonJS module exports as module.exports = { options: { … } }', async () => {
    const path = file(
      'wrapped.cjs',
      `module.exports = { options: { issuer: 'https://id.example.com', apps: [${JSON.stringify(APP)}] } };\n`,
    );
    const run = await cli(['config', 'check', path]);
    expect(run).toEqual({ code: 0, stdout: `${path}: the options are valid\n`, stderr: '' });
  });

  it('refuses a missing file argument with exit code 2, and says what is wrong with a broken file', async () => {
    expect((await cli(['config', 'check'])).code).toBe(2);
    expect((await cli(['config', '--help'])).stdout.startsWith('Usage: sentinel-idp config check <file>')).toBe(true);
    const broken = await cli(['config', 'check', file('broken.json', '{ "issuer": ')]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/broken\.json is not valid JSON/);
  });

  it('never prints the text of a broken file: a secret pasted without quotes stays out of the log', async () => {
    const secret = 'k3q9x7m2p4t8w1z6b5n0v3c7d2';
    const json = await cli(['config', 'check', file('unquoted.json', `{ "apps": [{ "clientSecret": ${secret} }] }`)]);
    const module = await cli(['config', 'check', file('unquoted.mjs', `export default {\n  apps: [{ clientSecret: ${secret} }],\n};\n`)]);
    for (const result of [json, module]) {
      expect(result.code).toBe(1);
      expect(result.stderr).not.toContain(secret.slice(0, 6));
    }
    expect(module.stderr).toMatch(/unquoted\.mjs could not be loaded: ReferenceError at line 2/);
  });

  it('exits when done although the module it checked keeps a connection open', async () => {
    // A module that builds its store opens its client on import (an ioredis client connects at once); the timer
    // stands in for it. The run must end anyway: a CI job waiting on it would hang until it is killed.
    const path = file(
      'connected.mjs',
      `setInterval(() => {}, 60_000);\nexport default { issuer: 'https://id.example.com', apps: [${JSON.stringify(APP)}] };\n`,
    );
    const run = await new Promise<{ code: number | string | null | undefined; stdout: string }>((resolve) => {
      execFile(process.execPath, [CLI, 'config', 'check', path], { timeout: 10_000 }, (error, stdout) => {
        resolve({ code: error === null ? 0 : error.killed ? 'killed' : error.code, stdout });
      });
    });
    expect(run).toEqual({ code: 0, stdout: `${path}: the options are valid\n` });
  }, 20_000);
});
