/**
 * The built CLI (dist/cli.js), run as a child process: help everywhere, exit code 2 for bad arguments, keys and
 * apps that the service accepts, and a real token fetched from a sentinel listening on a free port.
 */
import { spawn } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toExpress } from '../adapters/express/index.js';
import { createSentinel, type GrantType, hashClientSecret, type JWK, type Sentinel, verifyClientSecret } from '../src/index.js';
import { CLI, type CliRun, ensureBuilt, runCli } from './helpers/dist.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, CONSUMER_HEX, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';
import { listen, type MountedHost } from './helpers/hosts.js';
import express from 'express';

/** Runs the CLI without a terminal; `env` replaces the secret variable only. */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const { SENTINEL_CLIENT_SECRET: _inherited, ...rest } = process.env;
  return runCli(args, { ...rest, ...env });
}

beforeAll(() => ensureBuilt(), 180_000);

describe('sentinel-idp CLI: help and usage errors', () => {
  it.each([
    [['--help'], 'Usage: sentinel-idp <command>'],
    [['-h'], 'Usage: sentinel-idp <command>'],
    [['keys', '--help'], 'Usage: sentinel-idp keys <generate|list|rotate|revoke>'],
    [['keys', 'list', '--help'], 'Usage: sentinel-idp keys <generate|list|rotate|revoke>'],
    [['keys', 'generate', '--help'], 'Usage: sentinel-idp keys generate'],
    [['apps', '--help'], 'Usage: sentinel-idp apps register'],
    [['apps', 'register', '--help'], 'Usage: sentinel-idp apps register'],
    [['token', '--help'], 'Usage: sentinel-idp token'],
  ])('%j prints help on stdout and exits 0', async (args, heading) => {
    const run = await cli(args);
    expect(run.code).toBe(0);
    expect(run.stdout.startsWith(heading)).toBe(true);
    expect(run.stderr).toBe('');
  });

  it.each([
    [[], /Usage: sentinel-idp <command>/],
    [['frobnicate'], /unknown command "frobnicate"; expected keys, apps, issuers, sessions, db, config or token/],
    [['constructor'], /unknown command "constructor"/],
    [['keys', 'toString'], /unknown subcommand of "keys"/],
    [['Sup3r$ecret!'], /^sentinel-idp: unknown command; expected/],
    [['keys'], /"keys" needs a subcommand: generate/],
    [['keys', 'rotat'], /unknown subcommand of "keys"/],
    [['keys', 'rotate'], /--redis is required/],
    [['keys', 'revoke', '--redis', 'redis://127.0.0.1:1'], /--kid is required/],
    [['keys', 'list', '--redis', 'redis://127.0.0.1:1', '--kid', 'x'], /--kid belongs to keys revoke/],
    [['keys', 'generate', '--alg', 'HS256'], /--alg must be one of ES256, EdDSA, RS256/],
    [['keys', 'generate', '--alg'], /option --alg needs a value/],
    [['keys', 'revoke', '--kid', '--redis', 'redis://127.0.0.1:1'], /option --kid needs a value/],
    [['keys', 'generate', '--colour'], /unknown option --colour/],
    [['apps', 'register'], /--account is required/],
    [['apps', 'register', '--account', '1', '--account', '2'], /--account may be given only once/],
    [['apps', 'register', '--account', 'a/b'], /--account must be/],
    [['apps', 'register', '--account', '1', '--redirect-uri', 'http://app.example.com/cb'], /--redirect-uri #1 must use https/],
    [
      ['apps', 'register', '--account', '1', '--redirect-uri', 'https://app.example.com/cb#x'],
      /--redirect-uri #1 must not contain a fragment/,
    ],
    [['apps', 'register', '--account', '1', '--grant', 'password'], /--grant must be one of/],
    [['apps', 'register', '--account', '1', '--grant', 'authorization_code'], /--redirect-uri is required/],
    [['apps', 'register', '--account', '1', '--public', '--grant', 'client_credentials'], /--grant: a public client/],
    [['apps', 'register', '--account', '1', '--public=yes'], /option --public does not take a value/],
    [['token', '--issuer', 'https://id.example.com'], /--account is required/],
    [['token', '--issuer', 'not a url', '--account', 'a', '--client-id', 'c', '--consumer', 'd'], /--issuer must be an absolute URL/],
    [['token', '--issuer', 'http://id.example.com', '--account', 'a', '--client-id', 'c', '--consumer', 'd'], /--issuer must use https/],
  ])('%j exits 2 with a clear message on stderr', async (args, message) => {
    const run = await cli(args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
  });

  it('does not echo a stray positional argument, which may be a secret pasted in the wrong place', async () => {
    const run = await cli(['apps', 'register', '--account', '1', 'hunter2-secret-value']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/unexpected argument/);
    expect(run.stderr).not.toContain('hunter2-secret-value');
  });
});

describe('sentinel-idp CLI: a reader that goes away', () => {
  /** Runs the CLI with its stdout pipe closed by the reader before anything is written (`sentinel-idp … | true`). */
  function withClosedOutput(args: string[]): Promise<CliRun> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      child.on('close', (code) => resolve({ code: code ?? -1, stdout: '', stderr }));
    });
  }

  it.each([[['--help']], [['keys', 'generate', '--alg', 'EdDSA']]])(
    '%j says in one line that its output was lost and exits 1, without a stack trace',
    async (args) => {
      const run = await withClosedOutput(args);
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(run.stderr).toBe('sentinel-idp: the output was not all written: its reader closed the pipe\n');
      expect(run.code).toBe(1);
    },
  );
});

describe('sentinel-idp keys generate', () => {
  it.each([
    ['ES256', 'EC', 'P-256'],
    ['EdDSA', 'OKP', 'Ed25519'],
    ['RS256', 'RSA', undefined],
  ])('--alg %s prints a private %s JWK the service accepts', async (alg, kty, crv) => {
    const run = await cli(['keys', 'generate', '--alg', alg]);
    expect(run.code).toBe(0);
    const jwk = JSON.parse(run.stdout) as JWK & Record<string, string>;
    expect(jwk).toMatchObject({ kty, alg });
    expect(jwk.crv).toBe(crv);
    expect(typeof jwk.d).toBe('string');
    expect(jwk.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(createPrivateKey({ key: jwk, format: 'jwk' }).type).toBe('private');
    const sentinel = createSentinel({ issuer: 'https://id.example.com', keys: [jwk] });
    expect(sentinel.jwks().keys[0]).toMatchObject({ kid: jwk.kid, alg });
    expect(sentinel.jwks().keys[0]).not.toHaveProperty('d');
  });

  it('defaults to ES256 and gives every key its own kid', async () => {
    const [first, second] = await Promise.all([cli(['keys', 'generate']), cli(['keys', 'generate'])]);
    const a = JSON.parse(first.stdout) as Record<string, string>;
    const b = JSON.parse(second.stdout) as Record<string, string>;
    expect(a).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256' });
    expect(a.kid).not.toBe(b.kid);
  });
});

describe('sentinel-idp apps register', () => {
  it('prints a client id, a fresh secret and the hash to store, usable as an apps entry', async () => {
    const run = await cli(['apps', 'register', '--account', '123456', '--redirect-uri', 'https://app.example.com/cb', '--name', 'Acme']);
    expect(run.code).toBe(0);
    const app = JSON.parse(run.stdout) as {
      accountId: string;
      clientId: string;
      clientSecret: string;
      clientSecretHash: string;
      redirectUris: string[];
      grantTypes: GrantType[];
    };
    expect(app.accountId).toBe('123456');
    expect(app.clientId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Buffer.from(app.clientSecret, 'base64url')).toHaveLength(32);
    expect(app.clientSecretHash).toBe(hashClientSecret(app.clientSecret));
    expect(verifyClientSecret(app.clientSecret, app.clientSecretHash)).toBe(true);
    expect(app.redirectUris).toEqual(['https://app.example.com/cb']);
    expect(app.grantTypes).toEqual(['authorization_code', 'client_credentials', 'refresh_token']);
    expect(run.stderr).toMatch(/shown again/);
    expect(run.stderr).not.toContain(app.clientSecret);
    const { clientSecret: _shownOnce, ...stored } = app;
    expect(() => createSentinel({ issuer: 'https://id.example.com', apps: [stored], logger: { warn: () => {} } })).not.toThrow();
  });

  it('defaults a confidential app without redirect URIs to client_credentials, and repeats give several', async () => {
    const ccOnly = JSON.parse((await cli(['apps', 'register', '--account', '1'])).stdout) as { grantTypes: string[] };
    expect(ccOnly.grantTypes).toEqual(['client_credentials']);
    const several = await cli([
      'apps',
      'register',
      '--account',
      '1',
      '--redirect-uri',
      'https://a.example.com/cb',
      '--redirect-uri',
      'http://localhost:8080/cb',
      '--grant',
      'authorization_code',
    ]);
    expect(JSON.parse(several.stdout)).toMatchObject({
      redirectUris: ['https://a.example.com/cb', 'http://localhost:8080/cb'],
      grantTypes: ['authorization_code'],
    });
  });

  it('registers a public client without a secret', async () => {
    const run = await cli(['apps', 'register', '--account', '1', '--public', '--redirect-uri', 'com.example.app:/cb']);
    expect(run.code).toBe(0);
    const app = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(app).not.toHaveProperty('clientSecret');
    expect(app).not.toHaveProperty('clientSecretHash');
    expect(app).toMatchObject({ tokenEndpointAuthMethod: 'none', grantTypes: ['authorization_code', 'refresh_token'] });
  });

  it('refuses a name the service would refuse (too long), with exit code 2', async () => {
    const run = await cli(['apps', 'register', '--account', '1', '--name', 'A'.repeat(201)]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--name must be at most 200 characters');
    expect((await cli(['apps', 'register', '--account', '1', '--name', 'A'.repeat(200)])).code).toBe(0);
  });

  it('gives a different client id and secret on every run', async () => {
    const [a, b] = await Promise.all([cli(['apps', 'register', '--account', '1']), cli(['apps', 'register', '--account', '1'])]);
    const first = JSON.parse(a.stdout) as { clientId: string; clientSecret: string };
    const second = JSON.parse(b.stdout) as { clientId: string; clientSecret: string };
    expect(first.clientId).not.toBe(second.clientId);
    expect(first.clientSecret).not.toBe(second.clientSecret);
  });
});

describe('sentinel-idp token (against a real sentinel over HTTP)', () => {
  let sentinel: Sentinel;
  let host: MountedHost;
  const args = (consumer = CONSUMER_UUID): string[] => [
    'token',
    '--issuer',
    host.url,
    '--account',
    ACCOUNT,
    '--client-id',
    CLIENT_ID,
    '--consumer',
    consumer,
  ];

  beforeAll(async () => {
    sentinel = makeSentinel({ issuer: 'http://127.0.0.1' });
    const app = express();
    app.use(toExpress(sentinel));
    host = await listen(createServer(app));
  });
  afterAll(async () => {
    await host.close();
  });

  it('prints a consumer-bound token read with the secret from SENTINEL_CLIENT_SECRET', async () => {
    const run = await cli(args(CONSUMER_HEX), { SENTINEL_CLIENT_SECRET: CLIENT_SECRET });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const body = JSON.parse(run.stdout) as { access_token: string; token_type: string; expires_in: string };
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe('3600');
    const claims = await sentinel.verifyAccessToken(body.access_token, { accountId: ACCOUNT, consumerId: CONSUMER_HEX });
    expect(claims).toMatchObject({ sub: CONSUMER_HEX, client_id: CLIENT_ID });
    await expect(sentinel.verifyAccessToken(body.access_token, { consumerId: CONSUMER_UUID })).rejects.toMatchObject({
      code: 'invalid_token',
    });
  });

  it('refuses the secret as an argument, in every spelling, without echoing it', async () => {
    for (const flag of [
      ['--client-secret', 'topsecret-value-1'],
      ['--client-secret=topsecret-value-1'],
      ['--secret', 'topsecret-value-1'],
    ]) {
      const run = await cli([...args(), ...flag]);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/never accepted as an argument/);
      expect(run.stderr).toMatch(/SENTINEL_CLIENT_SECRET/);
      expect(run.stderr + run.stdout).not.toContain('topsecret-value-1');
    }
  });

  it('refuses an account that is not one path segment (a dot segment would post the secret elsewhere)', async () => {
    for (const account of ['..', '.', 'a/b']) {
      const at = args().indexOf('--account') + 1;
      const argv = args();
      argv[at] = account;
      const run = await cli(argv, { SENTINEL_CLIENT_SECRET: CLIENT_SECRET });
      expect(run.code, account).toBe(2);
      expect(run.stderr).toMatch(/--account must be/);
    }
  });

  it('exits 2 when there is no secret and no terminal to ask on', async () => {
    const run = await cli(args());
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/no client secret: set SENTINEL_CLIENT_SECRET/);
  });

  it('reports the service refusing a wrong secret (exit 1), without the secret', async () => {
    const run = await cli(args(), { SENTINEL_CLIENT_SECRET: 'wrong-secret-value-42' });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/HTTP 40[01]\) invalid_client/);
    expect(run.stderr).not.toContain('wrong-secret-value-42');
  });

  it('reports a consumer id the service refuses (exit 1)', async () => {
    const run = await cli(args('not-a-participant-id'), { SENTINEL_CLIENT_SECRET: CLIENT_SECRET });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/HTTP 400\) invalid_request: state must be a consumer participant id/);
  });

  it('reports an unreachable service (exit 1), naming only its origin', async () => {
    const closed = createServer();
    const { url, close } = await listen(closed);
    await close();
    const run = await cli(['token', '--issuer', url, '--account', ACCOUNT, '--client-id', CLIENT_ID, '--consumer', CONSUMER_UUID], {
      SENTINEL_CLIENT_SECRET: CLIENT_SECRET,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`sentinel-idp token: the request to ${url} failed\n`);
  });
});
