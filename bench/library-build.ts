/**
 * The library as the bench runs it: built with tsup, as the published package is, into `.tmp/bench-dist/` (ESM, one
 * set of shared chunks, so the core, the adapters and the Redis store are one module instance), plus the Node
 * request helpers the bare node:http rows use.
 *
 * Why not the source through tsx: tsx compiles with esbuild's `keepNames`, which wraps every function created at run
 * time in an `Object.defineProperty` of its name. The service creates closures per request, so the source paid for
 * it on every request (5 % of the main thread's CPU on client credentials, `perf`), and the peers, plain JavaScript
 * from node_modules, did not. The published build has no such wrapper.
 *
 * `BENCH_LIBRARY=source` loads the source through tsx instead (to compare, or to bench without building).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

/** Where the build goes: under .tmp/, which git ignores. */
const OUT_DIR = `${repo}/.tmp/bench-dist`;

/** Source module (as the bench names it) → built entry. */
const ENTRIES: Record<string, { name: string; source: string }> = {
  'src/index.js': { name: 'index', source: 'src/index.ts' },
  'src/stores/redis.js': { name: 'redis', source: 'src/stores/redis.ts' },
  'adapters/express/index.js': { name: 'express', source: 'adapters/express/index.ts' },
  'adapters/koa/index.js': { name: 'koa', source: 'adapters/koa/index.ts' },
  'adapters/fastify/index.js': { name: 'fastify', source: 'adapters/fastify/index.ts' },
  'adapters/node/index.js': { name: 'node', source: 'adapters/node/index.ts' },
  'adapters/fetch/index.js': { name: 'fetch', source: 'adapters/fetch/index.ts' },
};

/**
 * Never bundled: every package the manifest names (dependencies, peers, optional ones), read from package.json
 * rather than listed again here. tsup leaves exactly these out of the published build, so both builds agree
 * whatever the working directory.
 */
function externals(): string[] {
  const manifest = JSON.parse(readFileSync(`${repo}/package.json`, 'utf8')) as Record<string, Record<string, string> | undefined>;
  return Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies, ...manifest.optionalDependencies });
}

const fromSource = (): boolean => process.env.BENCH_LIBRARY === 'source';

/**
 * Builds the library for this run (a few seconds); the bench's entry scripts call it before they start servers.
 * @example await buildLibraryForBench(); // then fork bench/server.ts
 */
export async function buildLibraryForBench(): Promise<void> {
  if (fromSource()) return;
  const { build } = await import('tsup');
  await build({
    config: false,
    entry: Object.fromEntries(Object.values(ENTRIES).map(({ name, source }) => [name, `${repo}/${source}`])),
    format: ['esm'],
    splitting: true,
    target: 'node20',
    platform: 'node',
    outDir: OUT_DIR,
    external: externals(),
    sourcemap: false,
    treeshake: true,
    removeNodeProtocol: false,
    clean: true,
    dts: false,
    silent: true,
  });
}

/**
 * The URL to import for a module of the library named by its source path ('src/index.js'): the built entry, or the
 * source under `BENCH_LIBRARY=source`.
 * @example await import(libraryModuleURL('adapters/fastify/index.js'))
 */
export function libraryModuleURL(path: string): string {
  if (fromSource()) return pathToFileURL(`${repo}/${path.replace(/\.js$/, '.ts')}`).href;
  const entry = ENTRIES[path];
  if (entry === undefined) throw new Error(`the bench build has no entry for ${path} (bench/library-build.ts)`);
  const file = `${OUT_DIR}/${entry.name}.js`;
  if (!existsSync(file)) throw new Error(`${file} is missing: the bench's entry script builds it (buildLibraryForBench)`);
  return pathToFileURL(file).href;
}
