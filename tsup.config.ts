/**
 * Build of the published package: one ESM + CJS library with a subpath per adapter, and the CLI.
 *
 * `splitting: true` puts the core in shared chunks, so `sentinel-idp` and `sentinel-idp/express` (…) load the same
 * module instance inside one module system: one key set, one store, one `createSentinel`.
 */
import { rmSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';
import { readEntryPoints } from './scripts/entry-points.mjs';

/**
 * Subpath name in dist → source file, derived from package.json "exports" (scripts/entry-points.mjs). It throws when a
 * subpath has no source or a source file is missing, so the build fails rather than publish a package without it.
 */
const LIBRARY_ENTRIES = Object.fromEntries(readEntryPoints().map(({ name, source }) => [name, source]));

/** Never bundled: the runtime dependencies and the (optional) peer frameworks the user installs. */
const EXTERNAL = [
  'express',
  'koa',
  'fastify',
  'ioredis',
  'pg',
  'jose',
  'zod',
  'cookie',
  'lru-cache',
  'pkcs11js',
  '@simplewebauthn/server',
  'otplib',
];

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
    entry: LIBRARY_ENTRIES,
    format: ['esm', 'cjs'],
    dts: true,
    splitting: true,
  },
  {
    ...shared,
    entry: { cli: 'src/cli/bin.ts' },
    format: ['esm'],
    dts: false,
    splitting: false,
    banner: { js: '#!/usr/bin/env node' },
  },
]);
