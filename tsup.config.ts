/**
 * Build of the published package: one ESM + CJS library with a subpath per adapter, and the CLI.
 *
 * `splitting: true` puts the core in shared chunks, so `sentinel-idp` and `sentinel-idp/express` (…) load the same
 * module instance inside one module system: one key set, one store, one `createSentinel`.
 */
import { existsSync, rmSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';

/** Subpath name in dist → source file. Order follows package.json "exports". */
const LIBRARY_ENTRIES: Record<string, string> = {
  index: 'src/index.ts',
  express: 'adapters/express/index.ts',
  koa: 'adapters/koa/index.ts',
  fastify: 'adapters/fastify/index.ts',
  fetch: 'adapters/fetch/index.ts',
  redis: 'src/stores/redis.ts',
  postgres: 'src/postgres/index.ts',
  pkcs11: 'src/signers/pkcs11.ts',
};

/** Never bundled: the runtime dependencies and the (optional) peer frameworks the user installs. */
const EXTERNAL = ['express', 'koa', 'fastify', 'ioredis', 'pg', 'jose', 'zod', 'cookie', 'lru-cache', 'pkcs11js', '@simplewebauthn/server', 'otplib'];

// Adapters are written in parallel; building what exists keeps the CLI buildable meanwhile. The package test
// still requires every subpath of "exports", so a missing adapter fails there, loudly.
const present = Object.fromEntries(
  Object.entries(LIBRARY_ENTRIES).filter(([name, source]) => {
    if (existsSync(source)) return true;
    console.warn(`tsup: skipping entry "${name}": ${source} does not exist yet`);
    return false;
  }),
);

// The two builds below run concurrently, so neither may use tsup's `clean` (one would delete the other's output):
// dist is emptied once, here, before both start. Stale chunks would otherwise survive and confuse the checks.
rmSync('dist', { recursive: true, force: true });

const shared: Options = {
  target: 'node20',
  platform: 'node',
  outDir: 'dist',
  external: EXTERNAL,
  sourcemap: false,
  treeshake: true,
  // Keep `node:crypto` and friends as written: the prefix makes a built-in unmistakable for a same-named package.
  removeNodeProtocol: false,
};

export default defineConfig([
  {
    ...shared,
    entry: present,
    format: ['esm', 'cjs'],
    dts: true,
    splitting: true,
  },
  {
    ...shared,
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    dts: false,
    splitting: false,
    banner: { js: '#!/usr/bin/env node' },
  },
]);
