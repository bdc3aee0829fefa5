/**
 * package.json "exports" is the one list of public entry points; "sentinel.sources" names each one's source. Every
 * other list derives from them (scripts/entry-points.mjs): the build, the API reference, the TSDoc check, the
 * vitest aliases, and tsconfig's paths, the one copy that cannot compute and is compared here instead.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import {
  type EntryManifest,
  entryPointProblems,
  entryPointsOf,
  REPO_ROOT,
  readEntryPoints,
  tsconfigPaths,
} from '../scripts/entry-points.mjs';

const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as EntryManifest;

const target = (name: string) => ({
  import: { types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` },
  require: { types: `./dist/${name}.d.cts`, default: `./dist/${name}.cjs` },
});

describe('package.json entry points', () => {
  it('gives every subpath of "exports" a source file that exists, and no source to anything else', () => {
    expect(entryPointProblems(manifest, (source) => ts.sys.fileExists(join(REPO_ROOT, source)))).toEqual([]);
    const entries = readEntryPoints();
    expect(entries.map(({ subpath }) => subpath)).toEqual(
      Object.keys(manifest.exports ?? {}).filter((subpath) => subpath !== './package.json'),
    );
    expect(entries.find(({ subpath }) => subpath === '.')).toMatchObject({ specifier: 'sentinel-idp', name: 'index' });
  });

  it('names each disagreement between "exports" and "sentinel.sources"', () => {
    const broken: EntryManifest = {
      name: 'sentinel-idp',
      exports: {
        '.': target('index'),
        './koa': target('koa'),
        './odd': { import: { default: './lib/odd.mjs' } },
        './package.json': './package.json',
      },
      sentinel: { sources: { '.': 'src/index.ts', './odd': 'src/odd.ts', './gone': 'src/gone.ts' } },
    };
    expect(entryPointProblems(broken, (source) => source !== 'src/odd.ts')).toEqual([
      'subpath "./koa" has no source in package.json "sentinel.sources"',
      'subpath "./odd": source src/odd.ts does not exist',
      'subpath "./odd": its "import"."default" is not ./dist/<name>.js',
      'source of "./gone" in package.json "sentinel.sources" is not a subpath of "exports"',
    ]);
    expect(() => entryPointsOf(broken)).toThrow(/has no source/);
  });

  it('is what tsconfig.json maps the package specifiers to (print the block with `node scripts/entry-points.mjs`)', () => {
    const read = ts.readConfigFile(join(REPO_ROOT, 'tsconfig.json'), ts.sys.readFile);
    expect(read.config.compilerOptions.paths).toEqual(tsconfigPaths(readEntryPoints()));
  });

  it('is what the API reference, the TSDoc check and the vitest aliases use', async () => {
    const sources = readEntryPoints().map(({ source }) => source);
    const typedoc = (await import('../scripts/typedoc-entries.mjs')).default;
    expect(typedoc.entryPoints).toEqual(sources.map((source) => join(REPO_ROOT, source)));
    expect((await import('../scripts/check-tsdoc.js')).PUBLIC_ENTRIES).toEqual(sources);
    const vitest = (await import('../vitest.config.js')).default as { resolve: { alias: { find: RegExp; replacement: string }[] } };
    for (const { specifier, source } of readEntryPoints()) {
      const alias = vitest.resolve.alias.find(({ find }) => find.test(specifier));
      expect(alias?.replacement, specifier).toBe(join(REPO_ROOT, source));
    }
  });
});
