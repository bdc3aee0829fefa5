/**
 * The module map of docs/ARCHITECTURE.md is the one list of src/'s folders: scripts/check-imports.ts reads it from the
 * page, refuses a folder it does not list, and holds each folder to the folders its row may import.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkImports, findImportViolations, MODULE_MAP_DOCUMENT, moduleMapProblems, parseModuleMap } from '../scripts/check-imports.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const map = parseModuleMap(readFileSync(join(root, MODULE_MAP_DOCUMENT), 'utf8'));
const srcFolders = readdirSync(join(root, 'src'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

describe('the module map', () => {
  it('has a row for every folder of src/ and the root, and no row without its folder', () => {
    expect([...map.keys()].sort()).toEqual(['', ...srcFolders].sort());
    expect(moduleMapProblems(map, srcFolders, (path) => existsSync(join(root, path)))).toEqual([]);
  });

  it('names an entry file that exists for every row', () => {
    for (const row of map.values()) {
      expect(existsSync(join(root, 'src', row.folder, row.entry)), `src/${row.folder} ${row.entry}`).toBe(true);
    }
  });

  it('flags a src/ folder that is missing from the map', () => {
    const problems = moduleMapProblems(map, [...srcFolders, 'webhooks'], (path) => existsSync(join(root, path)));
    expect(problems).toHaveLength(1);
    expect(problems[0]?.reason).toMatch(/src\/webhooks\/ is not in the module map/);
  });

  it('flags a row whose folder or entry file is gone', () => {
    const withoutLib = srcFolders.filter((folder) => folder !== 'lib');
    expect(moduleMapProblems(map, withoutLib, (path) => existsSync(join(root, path))).map((p) => p.reason)).toEqual([
      'the module map lists src/lib/, which does not exist',
    ]);
    const problems = moduleMapProblems(map, srcFolders, (path) => path !== 'src/guard/bearer-check.ts' && existsSync(join(root, path)));
    expect(problems.map((p) => p.reason)).toEqual(['the entry file of src/guard/ (bearer-check.ts) does not exist']);
  });

  it('refuses to pass when the page has no map', () => {
    expect(() => parseModuleMap('# Architecture\n\nNo table here.\n')).toThrow(/no "## Module map" section/);
  });
});

describe('imports between the folders of src/', () => {
  const reasons = (file: string, text: string): string[] => findImportViolations(file, text, map).map((v) => v.reason);

  it('allows what a row lists, the shared root modules and the own folder', () => {
    expect(reasons('src/guard/bearer-check.ts', "import { x } from '../token/access-token.js';")).toEqual([]);
    expect(reasons('src/keys/keyring/ring.ts', "import { ConfigurationError } from '../../errors.js';")).toEqual([]);
    expect(reasons('src/keys/keyring/ring.ts', "import { keySetOf } from '../signing-keys.js';")).toEqual([]);
    expect(reasons('src/config.ts', "import { x } from './http/edge.js';")).toEqual([]);
  });

  it('refuses a folder its row does not list', () => {
    expect(reasons('src/lib/thenable.ts', "import { run } from '../http/edge.js';")).toEqual([
      expect.stringMatching(/src\/lib\/ may not import src\/http\//),
    ]);
    expect(reasons('src/stores/memory.ts', "import type { App } from '../apps/app.js';")).toHaveLength(1);
  });

  it('refuses the package entry anywhere but the root', () => {
    expect(reasons('src/token/revoke.ts', "import { createSentinel } from '../sentinel.js';")).toEqual([
      'only the package entry imports src/index.ts and src/sentinel.ts',
    ]);
  });
});

describe('checkImports over a tree', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('fails when a folder is added to src/ without a row in the map', () => {
    dir = mkdtempSync(join(tmpdir(), 'module-map-'));
    mkdirSync(join(dir, 'docs'));
    mkdirSync(join(dir, 'adapters'));
    mkdirSync(join(dir, 'src', 'lib'), { recursive: true });
    mkdirSync(join(dir, 'src', 'webhooks'));
    writeFileSync(
      join(dir, MODULE_MAP_DOCUMENT),
      '## Module map\n\n| folder | concept | entry file | may import |\n|---|---|---|---|\n| `src/` (root) | entry | `index.ts` | any folder |\n| `lib/` | helpers | `a.ts` | none |\n',
    );
    writeFileSync(join(dir, 'src', 'index.ts'), "export { a } from './lib/a.js';\n");
    writeFileSync(join(dir, 'src', 'lib', 'a.ts'), 'export const a = 1;\n');
    writeFileSync(join(dir, 'src', 'webhooks', 'send.ts'), "import { a } from '../lib/a.js';\nexport const b = a;\n");
    expect(checkImports(dir).map((v) => v.reason)).toEqual([
      'src/webhooks/ is not in the module map: add its row (folder, concept, entry file, may import)',
    ]);
  });
});
