/**
 * Client libraries of other ecosystems, as Debian packages them, against a real server (Express on a port of its
 * own): Go (golang.org/x/oauth2, coreos/go-oidc, go-jose), Ruby (openid_connect over rack-oauth2; the oauth2 gem
 * with ruby-jwt) and Python (Authlib; requests-oauthlib with PyJWT). Each program in test/interop/ does the code flow with ID token
 * verification (RS256), a refresh, client credentials at the account token endpoint and at the v2 consumer
 * endpoint, and `private_key_jwt` at both, with the library's own calls. The test signs the user in when a program
 * prints `AUTHORIZE <url>` and checks every token the program prints with the service's own verifier.
 *
 * A missing toolchain skips with the reason printed; with SENTINEL_REQUIRE_INTEROP=1 (set by .ci/run) it fails.
 */
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toExpress } from '../adapters/express/index.js';
import { createSentinel, generatePrivateJWK, type Sentinel } from '../src/index.js';
import { ACCOUNT, baseOptions, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, REDIRECT_URI, USER_ID } from './helpers/fixtures.js';
import { signIn } from './helpers/login-drive.js';

const REQUIRED = process.env.SENTINEL_REQUIRE_INTEROP === '1';
const KEYED_CLIENT_ID = '5eed0000-1111-4222-8333-444455556666';
const HERE = join(import.meta.dirname, 'interop');
/** Debian's Python libraries are installed for the system interpreter, not for another python3 on PATH. */
const PYTHON = '/usr/bin/python3';
/** A Go build of the client takes seconds with a warm cache, tens of seconds with a cold one. */
const TIMEOUT_MS = 120_000;

/** The steps every program runs, and what each token must say. */
const STEPS = ['code', 'refresh', 'client_credentials', 'client_credentials_v2', 'private_key_jwt', 'private_key_jwt_v2'] as const;
type Step = (typeof STEPS)[number];
type Result = Record<string, unknown> & { access_token: string; expires_in: number | string };

interface Client {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** Why the toolchain or a library is missing, or null. */
  missing(): string | null;
  /** The step-name prefix of each library the program drives ('' for the first); each signs in once. */
  libraries: string[];
}

function probe(command: string, args: string[], env: Record<string, string> = {}): string | null {
  const run = spawnSync(command, args, { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } });
  if (run.error !== undefined) return `${command}: ${run.error.message}`;
  if (run.status !== 0) return `${command} ${args.join(' ')}: ${(run.stderr || run.stdout).trim().split('\n').slice(-3).join(' ')}`;
  return null;
}

const gocache = join(tmpdir(), 'sentinel-interop-gocache');
const GO_ENV = { GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOCACHE: gocache, GOFLAGS: '', GOPROXY: 'off' };

const CLIENTS: Client[] = [
  {
    name: 'go (x/oauth2, go-oidc, go-jose)',
    command: 'go',
    args: ['run', join(HERE, 'go', 'client.go')],
    env: GO_ENV,
    missing: () =>
      probe('go', ['list', 'golang.org/x/oauth2/clientcredentials', 'github.com/coreos/go-oidc', 'gopkg.in/square/go-jose.v2/jwt'], GO_ENV),
    libraries: [''],
  },
  {
    name: 'ruby (openid_connect over rack-oauth2; oauth2 with ruby-jwt)',
    command: 'ruby',
    args: [join(HERE, 'ruby', 'client.rb')],
    missing: () =>
      probe('ruby', ['-e', 'require "openid_connect"; require "rack/oauth2"; require "json/jwt"; require "oauth2"; require "jwt"']),
    libraries: ['', 'oauth2.'],
  },
  {
    name: 'python (Authlib; requests-oauthlib with PyJWT)',
    command: PYTHON,
    args: [join(HERE, 'python', 'client.py')],
    missing: () => probe(PYTHON, ['-c', 'import authlib, requests_oauthlib, jwt, requests']),
    libraries: ['', 'requests_oauthlib.'],
  },
];

let server: Server;
let sentinel: Sentinel;
let issuer: string;
let keyDir: string;
let keyFile: string;
let keyId: string;

beforeAll(async () => {
  // The issuer must be the URL the clients reach (discovery checks it), so the port is taken before the service exists.
  const app = express();
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  keyId = randomUUID();
  keyDir = mkdtempSync(join(tmpdir(), 'sentinel-interop-'));
  keyFile = join(keyDir, 'client-key.pem');
  writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid: keyId, alg: 'RS256', use: 'sig' };

  const base = baseOptions();
  sentinel = createSentinel({
    ...base,
    issuer,
    // go-oidc verifies RS256 ID tokens only unless told otherwise: sign with an RSA key.
    keys: [generatePrivateJWK('RS256')],
    apps: [
      ...(base.apps ?? []),
      {
        accountId: ACCOUNT,
        clientId: KEYED_CLIENT_ID,
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwks: { keys: [publicJwk] },
        redirectUris: [],
        grantTypes: ['client_credentials'],
      },
    ],
  });
  app.use(toExpress(sentinel));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(keyDir, { recursive: true, force: true });
});

/** Runs one client program to the end, signing in whenever it asks; returns its results by step. */
async function run(client: Client): Promise<{ results: Map<string, Result>; signIns: number }> {
  const child = spawn(client.command, client.args, {
    env: {
      ...process.env,
      ...client.env,
      INTEROP_ISSUER: `${issuer}/sentinel/api/account/${ACCOUNT}`,
      INTEROP_V2_TOKEN_URL: `${issuer}/sentinel/api/v2/account/${ACCOUNT}/app/token?state=${CONSUMER_UUID}`,
      INTEROP_CLIENT_ID: CLIENT_ID,
      INTEROP_CLIENT_SECRET: CLIENT_SECRET,
      INTEROP_REDIRECT_URI: REDIRECT_URI,
      INTEROP_KEYED_CLIENT_ID: KEYED_CLIENT_ID,
      INTEROP_KEY_FILE: keyFile,
      INTEROP_KEY_ID: keyId,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
  const results = new Map<string, Result>();
  let signIns = 0;
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  for await (const line of createInterface({ input: child.stdout })) {
    if (line.startsWith('AUTHORIZE ')) {
      const authorize = new URL(line.slice('AUTHORIZE '.length));
      expect(authorize.origin).toBe(issuer);
      const back = await signIn(request.agent(server), `${authorize.pathname}${authorize.search}`);
      signIns += 1;
      child.stdin.write(`${back.headers.location as string}\n`);
    } else if (line.startsWith('RESULT ')) {
      const [, step, json] = /^RESULT (\S+) (.*)$/.exec(line) ?? [];
      results.set(step as string, JSON.parse(json as string) as Result);
    }
  }
  const code = await exited;
  clearTimeout(timer);
  expect(code, `${client.name} exited with ${code}: ${stderr.trim()}`).toBe(0);
  return { results, signIns };
}

async function expectTokens(results: Map<string, Result>, prefix = ''): Promise<void> {
  const get = (step: Step): Result => {
    const result = results.get(`${prefix}${step}`);
    expect(result, `step ${prefix}${step} reported`).toBeDefined();
    // expires_in as the library hands it over (Go turns it into a time, which the program counts back): the
    // account token endpoint's is a number (RFC 6749 §5.1); the v2 path keeps the platform's string of digits.
    const expiresIn = (result as Result).expires_in;
    if (!step.endsWith('_v2')) expect(typeof expiresIn, `${prefix}${step} expires_in`).toBe('number');
    expect(Math.abs(Number(expiresIn) - 3600), `${prefix}${step} expires_in`).toBeLessThanOrEqual(10);
    return result as Result;
  };
  const code = get('code');
  expect(code.id_token_sub).toBe(USER_ID);
  expect(await sentinel.verifyAccessToken(code.access_token, { accountId: ACCOUNT })).toMatchObject({ sub: USER_ID, client_id: CLIENT_ID });
  const refreshed = get('refresh');
  expect(refreshed.access_token).not.toBe(code.access_token);
  expect(refreshed.refresh_token).not.toBe(code.refresh_token);
  expect(await sentinel.verifyAccessToken(refreshed.access_token, { accountId: ACCOUNT })).toMatchObject({
    sub: USER_ID,
    client_id: CLIENT_ID,
  });
  expect(await sentinel.verifyAccessToken(get('client_credentials').access_token, { accountId: ACCOUNT })).toMatchObject({
    sub: CLIENT_ID,
    gty: 'client_credentials',
  });
  expect(
    await sentinel.verifyAccessToken(get('client_credentials_v2').access_token, { accountId: ACCOUNT, consumerId: CONSUMER_UUID }),
  ).toMatchObject({ sub: CONSUMER_UUID, client_id: CLIENT_ID });
  expect(await sentinel.verifyAccessToken(get('private_key_jwt').access_token, { accountId: ACCOUNT })).toMatchObject({
    sub: KEYED_CLIENT_ID,
    client_id: KEYED_CLIENT_ID,
  });
  expect(
    await sentinel.verifyAccessToken(get('private_key_jwt_v2').access_token, { accountId: ACCOUNT, consumerId: CONSUMER_UUID }),
  ).toMatchObject({ sub: CONSUMER_UUID, client_id: KEYED_CLIENT_ID });
}

describe('client libraries of other ecosystems (Debian packages)', () => {
  for (const client of CLIENTS) {
    const missing = client.missing();
    if (missing !== null && !REQUIRED) {
      console.warn(`[interop] ${client.name} skipped: ${missing}. Set SENTINEL_REQUIRE_INTEROP=1 to make this a failure.`);
    }
    it.skipIf(missing !== null && !REQUIRED)(
      `${client.name}: code flow + ID token, refresh, client credentials and private_key_jwt at both token endpoints`,
      async () => {
        if (missing !== null) throw new Error(`SENTINEL_REQUIRE_INTEROP=1 but ${missing}`);
        const { results, signIns } = await run(client);
        expect(signIns).toBe(client.libraries.length);
        for (const prefix of client.libraries) await expectTokens(results, prefix);
      },
      TIMEOUT_MS + 10_000,
    );
  }
});
