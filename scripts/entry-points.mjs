/**
 * The public entry points of the package, read from package.json and nowhere else.
 *
 * package.json `exports` is the one list of subpaths. Each subpath's built file is `./dist/<name>.js`, and its
 * source file is named in package.json under `sentinel.sources`, keyed by the same subpath: the sources do not follow
 * one rule (`./express` is `adapters/express/index.ts`, `./redis` is `src/stores/redis.ts`), so they are written down
 * beside the exports rather than guessed. tsup, typedoc, the TSDoc check, the vitest aliases and the tsconfig paths
 * all derive from this module, and test/entry-points.test.ts fails when the two lists disagree.
 *
 * Plain JavaScript because typedoc loads it (through `extends` in typedoc.json) without a TypeScript loader.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file lives in `scripts/`). */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Subpaths of `exports` that are not code: no source, no build. */
const NOT_CODE = new Set(['./package.json']);

/**
 * Lists the disagreements between `exports` and `sentinel.sources` of a parsed package.json: a subpath without a
 * source, a source without a subpath, an export whose ESM default is not `./dist/<name>.js`, and (when `exists` is
 * given) a source file that is not there. Empty when they agree.
 *
 * @example
 * entryPointProblems({ name: 'x', exports: { '.': { import: { default: './dist/index.js' } } }, sentinel: { sources: {} } });
 * // ['subpath "." has no source in package.json "sentinel.sources"']
 */
export function entryPointProblems(manifest, exists) {
  const problems = [];
  const exportsField = manifest.exports ?? {};
  const sources = manifest.sentinel?.sources ?? {};
  const subpaths = Object.keys(exportsField).filter((subpath) => !NOT_CODE.has(subpath));
  for (const subpath of subpaths) {
    const source = sources[subpath];
    if (typeof source !== 'string') problems.push(`subpath "${subpath}" has no source in package.json "sentinel.sources"`);
    else if (exists !== undefined && !exists(source)) problems.push(`subpath "${subpath}": source ${source} does not exist`);
    if (distName(exportsField[subpath]) === undefined)
      problems.push(`subpath "${subpath}": its "import"."default" is not ./dist/<name>.js`);
  }
  for (const subpath of Object.keys(sources)) {
    if (!subpaths.includes(subpath))
      problems.push(`source of "${subpath}" in package.json "sentinel.sources" is not a subpath of "exports"`);
  }
  return problems;
}

/**
 * The entry points of a parsed package.json, in the order of its `exports`: subpath, import specifier, dist name and
 * source file (relative to the root). Throws when {@link entryPointProblems} finds any, so that a build or a
 * documentation run fails loudly instead of skipping an entry.
 *
 * @example
 * entryPointsOf(manifest).find((entry) => entry.subpath === './redis');
 * // { subpath: './redis', specifier: 'sentinel-idp/redis', name: 'redis', source: 'src/stores/redis.ts' }
 */
export function entryPointsOf(manifest, exists) {
  const problems = entryPointProblems(manifest, exists);
  if (problems.length > 0) {
    throw new Error(`package.json entry points disagree (fix "exports" or "sentinel.sources"):\n  ${problems.join('\n  ')}`);
  }
  return Object.keys(manifest.exports)
    .filter((subpath) => !NOT_CODE.has(subpath))
    .map((subpath) => ({
      subpath,
      specifier: subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
      name: distName(manifest.exports[subpath]),
      source: manifest.sentinel.sources[subpath],
    }));
}

/**
 * The entry points of the package at `root` (this repository by default); every source file must exist.
 *
 * @example
 * const tsupEntries = Object.fromEntries(readEntryPoints().map(({ name, source }) => [name, source]));
 */
export function readEntryPoints(root = REPO_ROOT) {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return entryPointsOf(manifest, (source) => existsSync(join(root, source)));
}

/**
 * The `compilerOptions.paths` that let TypeScript and tsx resolve the package's own specifiers to its sources (the
 * examples import `sentinel-idp/express` as users do). tsconfig.json cannot compute them, so it holds a copy that
 * test/entry-points.test.ts compares with this.
 *
 * @example
 * tsconfigPaths(readEntryPoints())['sentinel-idp/redis']; // ['./src/stores/redis.ts']
 */
export function tsconfigPaths(entries) {
  return Object.fromEntries(entries.map(({ specifier, source }) => [specifier, [`./${source}`]]));
}

/** `./dist/<name>.js` → `<name>`; undefined for any other shape. */
function distName(target) {
  const file = target?.import?.default;
  const match = typeof file === 'string' ? /^\.\/dist\/([\w-]+)\.js$/.exec(file) : null;
  return match?.[1];
}

// Printed for pasting when tsconfig.json's copy is out of date: `node scripts/entry-points.mjs`.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(JSON.stringify({ paths: tsconfigPaths(readEntryPoints()) }, null, 2));
}
