/**
 * The package as users get it: `npm pack`, install the tarball into an empty project, and load every subpath from
 * both module systems; `publint --strict` and `attw` on the same tarball. This checks the tarball, not the sources.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEntryPoints } from '../scripts/entry-points.mjs';
import { ensureBuilt, ROOT } from './helpers/dist.js';

/**
 * Every subpath of package.json "exports" but `/pkcs11`, which imports the native `pkcs11js` on load: an optional peer
 * the empty consumer project does not install (test/pkcs11.test.ts loads it where it is present).
 */
const SUBPATHS = readEntryPoints()
  .map(({ specifier }) => specifier)
  .filter((specifier) => specifier !== 'sentinel-idp/pkcs11');

/** The names each subpath must export (the public API in README.md); more is fine. */
const REQUIRED_EXPORTS: Record<string, string[]> = {
  'sentinel-idp': ['createSentinel', 'MemoryStore', 'OAuthError', 'isOAuthError', 'generatePrivateJWK', 'hashClientSecret'],
  'sentinel-idp/express': ['toExpress', 'requireAccessToken'],
  'sentinel-idp/koa': ['toKoa', 'requireAccessToken'],
  'sentinel-idp/fastify': ['toFastify', 'requireAccessToken'],
  'sentinel-idp/fetch': ['toFetch', 'requireAccessToken'],
  'sentinel-idp/redis': ['RedisStore'],
  'sentinel-idp/postgres': ['PostgresAppStore'],
};

/** Internal helpers that must not leak into any subpath (they are not part of the public API in README.md). */
const INTERNAL_NAMES = ['expectationsFromParams', 'isBodyTooLarge', 'contextOf'];

const CONSUMER = '0b3f6a2e-8c1d-4e5f-9a7b-1c2d3e4f5a6b';

// Loads every subpath, issues one real token through the fetch adapter, and checks an OAuthError made by the other
// module system's copy of the core. Printed as JSON for the test to inspect.
const smokeBody = (load: string): string => `
const subpaths = ${JSON.stringify(SUBPATHS)};
const exportsOf = {};
for (const subpath of subpaths) exportsOf[subpath] = Object.keys(${load}).filter((name) => name !== 'default' && name !== 'module.exports').sort();
const { createSentinel, generatePrivateJWK, isOAuthError } = ${load.replace('subpath', "'sentinel-idp'")};
const { toFetch } = ${load.replace('subpath', "'sentinel-idp/fetch'")};
const sentinel = createSentinel({
  issuer: 'https://id.example.com',
  keys: [generatePrivateJWK('ES256')],
  apps: [{ accountId: '123456', clientId: 'c-1', clientSecret: 's3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t', grantTypes: ['client_credentials'] }],
});
const response = await toFetch(sentinel, { ip: () => '203.0.113.1' })(new Request('https://id.example.com/sentinel/api/v2/account/123456/app/token?state=${CONSUMER}', {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
  body: 'grant_type=client_credentials&client_id=c-1&client_secret=s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t',
}));
const token = await response.json();
const claims = await sentinel.verifyAccessToken(token.access_token, { accountId: '123456', consumerId: '${CONSUMER}' });
const other = OTHER_COPY;
const foreign = new other.OAuthError('invalid_request', 'made by the other module system');
let thrown;
try { await other.createSentinel({ issuer: 'https://id.example.com', keys: [generatePrivateJWK('ES256')] }).verifyAccessToken('not-a-jwt'); } catch (error) { thrown = error; }
console.log(JSON.stringify({
  exportsOf,
  status: response.status,
  tokenType: token.token_type,
  subject: claims.sub,
  foreignRecognised: isOAuthError(foreign),
  foreignIsInstance: foreign instanceof ${load.replace('subpath', "'sentinel-idp'")}.OAuthError,
  thrownRecognised: isOAuthError(thrown),
  thrownCode: thrown && thrown.code,
  plainErrorRecognised: isOAuthError(new Error('x')),
}));
`;

const ESM_SMOKE = `import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const modules = {};
for (const subpath of ${JSON.stringify(SUBPATHS)}) modules[subpath] = await import(subpath);
${smokeBody('modules[subpath]').replace('OTHER_COPY', "require('sentinel-idp')")}`;

const CJS_SMOKE = `(async () => {
${smokeBody('require(subpath)').replace('OTHER_COPY', "await import('sentinel-idp')")}
})().catch((error) => { console.error(error); process.exitCode = 1; });`;

interface Smoke {
  exportsOf: Record<string, string[]>;
  status: number;
  tokenType: string;
  subject: string;
  foreignRecognised: boolean;
  foreignIsInstance: boolean;
  thrownRecognised: boolean;
  thrownCode: string;
  plainErrorRecognised: boolean;
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, timeout: 90_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

let work: string;
let tarball: string;
let project: string;
let packedFiles: string[];

beforeAll(async () => {
  ensureBuilt();
  work = mkdtempSync(join(tmpdir(), 'sentinel-idp-pack-'));
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--pack-destination', work, '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' }),
  ) as { filename: string; files: { path: string }[] }[];
  tarball = join(work, packed[0]?.filename ?? '');
  packedFiles = (packed[0]?.files ?? []).map((file) => file.path).sort();
  project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'smoke', version: '0.0.0', private: true }));
  // The npm cache is warm (the repository installed the same dependencies), so this needs no network.
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-package-lock', tarball], {
    cwd: project,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  writeFileSync(join(project, 'smoke.mjs'), ESM_SMOKE);
  writeFileSync(join(project, 'smoke.cjs'), CJS_SMOKE);
}, 120_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('ships only dist, README.md, LICENSE and package.json', () => {
    expect(packedFiles).toContain('README.md');
    expect(packedFiles).toContain('LICENSE');
    expect(packedFiles).toContain('dist/cli.js');
    for (const file of packedFiles) expect(file).toMatch(/^(dist\/[^/]+\.(js|cjs|d\.ts|d\.cts)|README\.md|LICENSE|package\.json)$/);
  });

  it('declares engines, optional peers and a bin', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/sentinel-idp/package.json'), 'utf8')) as {
      engines: Record<string, string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
      bin: Record<string, string>;
      files: string[];
    };
    expect(manifest.engines.node).toBe('^20.19.0 || >=22.12.0');
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual(['express', 'fastify', 'ioredis', 'koa', 'pg', 'pkcs11js']);
    for (const peer of Object.keys(manifest.peerDependencies)) expect(manifest.peerDependenciesMeta[peer]?.optional).toBe(true);
    expect(manifest.bin['sentinel-idp']).toBe('./dist/cli.js');
    expect(manifest.files).toEqual(['dist', 'README.md', 'LICENSE']);
    // Optional peers are not installed: every subpath below loads without any framework present.
    expect(readdirSync(join(project, 'node_modules'))).not.toEqual(expect.arrayContaining(['express']));
  });

  it('has exactly one copy of the core per module system (splitting: every subpath shares it)', () => {
    const dist = join(project, 'node_modules/sentinel-idp/dist');
    const count = (extension: string, pattern: RegExp): number =>
      readdirSync(dist)
        .filter((file) => file.endsWith(extension))
        .reduce((sum, file) => sum + (readFileSync(join(dist, file), 'utf8').match(pattern)?.length ?? 0), 0);
    for (const extension of ['.js', '.cjs']) {
      expect(count(extension, /function createSentinel\(/g)).toBe(1);
      expect(count(extension, /OAuthError = class extends Error|class OAuthError extends Error/g)).toBe(1);
      expect(count(extension, /function isOAuthError\(/g)).toBe(1);
    }
  });

  it.each([
    ['ESM (import)', 'smoke.mjs'],
    ['CommonJS (require)', 'smoke.cjs'],
  ])('%s loads every subpath, issues a token, and recognises the other copy’s OAuthError', async (_name, script) => {
    const result = await run(process.execPath, [script], project);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const smoke = JSON.parse(result.stdout) as Smoke;
    for (const subpath of SUBPATHS) expect(smoke.exportsOf[subpath]).toEqual(expect.arrayContaining(REQUIRED_EXPORTS[subpath] ?? []));
    for (const subpath of SUBPATHS) expect(smoke.exportsOf[subpath]?.filter((name) => INTERNAL_NAMES.includes(name))).toEqual([]);
    expect(smoke.status).toBe(200);
    expect(smoke.tokenType).toBe('Bearer');
    expect(smoke.subject).toBe(CONSUMER);
    // Two copies (ESM and CJS) of the class: instanceof fails, the brand check does not.
    expect(smoke.foreignIsInstance).toBe(false);
    expect(smoke.foreignRecognised).toBe(true);
    expect(smoke.thrownRecognised).toBe(true);
    expect(smoke.thrownCode).toBe('invalid_token');
    expect(smoke.plainErrorRecognised).toBe(false);
  });

  it('installs a working sentinel-idp bin', async () => {
    const result = await run(join(project, 'node_modules/.bin/sentinel-idp'), ['keys', 'generate', '--alg', 'EdDSA'], project);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' });
  });

  it('passes publint --strict', async () => {
    const result = await run(join(ROOT, 'node_modules/.bin/publint'), ['run', '--strict', tarball], ROOT);
    expect(result.stdout + result.stderr).toMatch(/All good/);
    expect(result.code).toBe(0);
  });

  // Profile node16: engines require Node >= 20.19, and TypeScript's legacy node10 resolution ("moduleResolution":
  // "node") cannot read "exports" at all, so subpaths cannot resolve there by design. node16/nodenext and bundler
  // resolution are all checked, from both ESM and CJS importers.
  it('passes @arethetypeswrong/cli under the node16 profile', async () => {
    const result = await run(join(ROOT, 'node_modules/.bin/attw'), [tarball, '--profile', 'node16', '--format', 'json'], ROOT);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as {
      problems?: Record<string, { kind: string; entrypoint: string; resolutionKind?: string }[]>;
    };
    const problems = Object.values(report.problems ?? {})
      .flat()
      .filter((problem) => problem.resolutionKind !== 'node10');
    expect(problems).toEqual([]);
  });
});
