/**
 * The import rule of the architecture (docs/ARCHITECTURE.md):
 * - `src/` never imports a framework or a Redis client: express, koa, fastify, their `@koa/*` / `@fastify/*` /
 *   `koa-*` / `express-*` / `fastify-*` companions, ioredis. The one exception is `import type` from ioredis in
 *   `src/stores/redis.ts`, which is erased at build time and loads nothing.
 * - `adapters/<name>/` reach the core only through its public API, `../../src/index.js`, and the bearer guard's
 *   shared logic, `../../src/guard/bearer-request.js`, the unknown-option check, `../../src/lib/strict-options.js`,
 *   and the mount path rule, `../../src/http/mount-path.js`; they share Node code only through `../node/…`; nothing
 *   else outside their own folder.
 * - Inside `src/`, the module map of docs/ARCHITECTURE.md (its "Module map" table, read from the page itself, so the
 *   page and this check cannot drift): a file may import, outside its own top folder, only the folders its folder's
 *   row lists and the shared root modules; nothing imports the entry (`index.ts`, `sentinel.ts`) but the root; and
 *   every folder of `src/` has a row whose entry file exists, every row a folder.
 *
 * Run: `node --import tsx scripts/check-imports.ts` (exit 1 and one line per violation when the rule is broken).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

/** One import that breaks the rule. */
export interface ImportViolation {
  file: string;
  line: number;
  specifier: string;
  reason: string;
}

/** One module reference found in a source file. */
interface ModuleReference {
  specifier: string;
  line: number;
  typeOnly: boolean;
}

const FRAMEWORK = /^(?:express|koa|fastify|ioredis)(?:\d+)?(?:[/-]|$)|^@(?:koa|fastify)\//;
const TYPE_ONLY_EXCEPTIONS: Record<string, RegExp> = { 'src/stores/redis.ts': /^ioredis$/ };
/**
 * Files of the CLI binary (built on its own, never imported by the core) that may load a client at run time: the
 * `keys` commands connect to the Redis of the shared key ring, with `import()` only when `--redis` is given.
 */
const RUNTIME_EXCEPTIONS: Record<string, RegExp> = { 'src/cli/redis-connection.ts': /^ioredis$/ };
const CORE_ENTRY = '../../src/index.js';
/**
 * The one internal core module adapters may import besides the public API: how every `requireAccessToken` reads its
 * expectations from route parameters. Shared logic, not a user-facing export.
 */
const GUARD_ENTRY = '../../src/guard/bearer-request.js';
/**
 * The other: how every option a host passes refuses a key it does not know (`assertKnownKeys`), so an adapter's own
 * options are refused in the same words as the core's. No framework, no state.
 */
const OPTIONS_ENTRY = '../../src/lib/strict-options.js';
/**
 * And the core's one rule for a mount path (`isMountPath`), which `toFetch` checks its `mountPath` option against
 * when it is made, in the core's own terms. No framework, no state.
 */
const MOUNT_ENTRY = '../../src/http/mount-path.js';

/** Where the module map lives, relative to the repository root. */
export const MODULE_MAP_DOCUMENT = 'docs/ARCHITECTURE.md';
const MODULE_MAP_HEADING = /^## Module map\s*$/;
/** Root modules only the root itself may import: the package entry and the wiring behind it. */
const ENTRY_MODULES = new Set(['index', 'sentinel']);

/** One row of the module map: a top folder of `src/` (`''` for the root's own files). */
export interface ModuleMapRow {
  folder: string;
  concept: string;
  entry: string;
  /** The other top folders its files may import; `'any'` for every folder. */
  mayImport: ReadonlySet<string> | 'any';
}

/** The module map, by folder (`''` is the root of `src/`). */
export type ModuleMap = ReadonlyMap<string, ModuleMapRow>;

const folderName = (cell: string): string | undefined => {
  const name = /`([^`]+)`/.exec(cell)?.[1];
  if (name === undefined) return undefined;
  return name === 'src/' ? '' : name.replace(/\/$/, '');
};

/**
 * Reads the "Module map" table of docs/ARCHITECTURE.md: folder, concept, entry file, may import. Throws when the page
 * has no such table, so that losing the map fails the check instead of passing it.
 *
 * @example
 * parseModuleMap('## Module map\n\n| folder | concept | entry file | may import |\n|---|---|---|---|\n| `lib/` | helpers | `a.ts` | none |\n');
 * // Map { 'lib' => { folder: 'lib', concept: 'helpers', entry: 'a.ts', mayImport: Set {} } }
 */
export function parseModuleMap(markdown: string): ModuleMap {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => MODULE_MAP_HEADING.test(line));
  if (start === -1) throw new Error(`${MODULE_MAP_DOCUMENT} has no "## Module map" section`);
  const rows = new Map<string, ModuleMapRow>();
  let inTable = false;
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('## ')) break;
    if (!line.startsWith('|')) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    const folder = folderName(cells[0] ?? '');
    if (folder === undefined || cells.length < 4) continue; // the header and the separator row
    const entry = /`([^`]+)`/.exec(cells[2] ?? '')?.[1] ?? '';
    const allowed = cells[3] ?? '';
    const mayImport = /^any\b/.test(allowed)
      ? 'any'
      : new Set([...allowed.matchAll(/`([^`]+)`/g)].map((match) => (match[1] ?? '').replace(/\/$/, '')));
    rows.set(folder, { folder, concept: cells[1] ?? '', entry, mayImport });
  }
  if (rows.size === 0) throw new Error(`${MODULE_MAP_DOCUMENT}: the "## Module map" section has no table rows`);
  return rows;
}

/** The top folder of a path under `src/` (`''` for a file at its root), or undefined outside `src/`. */
function topFolder(path: string): string | undefined {
  const parts = path.split('/');
  if (parts[0] !== 'src' || parts.length < 2) return undefined;
  return parts.length === 2 ? '' : parts[1];
}

/**
 * What disagrees between the module map and the folders of `src/`: a folder without a row, a row without its folder,
 * an entry file that does not exist. `folders` are the top folder names of `src/`; `exists` answers for a path under
 * `src/`.
 *
 * @example
 * moduleMapProblems(map, ['http', 'guard', 'new-thing'], existsSync); // [{ reason: 'src/new-thing/ is not in the module map…' }]
 */
export function moduleMapProblems(map: ModuleMap, folders: readonly string[], exists: (path: string) => boolean): ImportViolation[] {
  const problems: ImportViolation[] = [];
  const problem = (reason: string): void => {
    problems.push({ file: MODULE_MAP_DOCUMENT, line: 0, specifier: 'module map', reason });
  };
  for (const folder of folders) {
    if (!map.has(folder)) problem(`src/${folder}/ is not in the module map: add its row (folder, concept, entry file, may import)`);
  }
  for (const row of map.values()) {
    const base = row.folder === '' ? 'src' : `src/${row.folder}`;
    if (row.folder !== '' && !folders.includes(row.folder)) problem(`the module map lists ${base}/, which does not exist`);
    else if (row.entry === '' || !exists(`${base}/${row.entry}`))
      problem(`the entry file of ${base}/ (${row.entry || 'none'}) does not exist`);
    if (row.mayImport !== 'any') {
      for (const target of row.mayImport) {
        if (!map.has(target)) problem(`${base}/ may import ${target}/, which is not in the module map`);
      }
    }
  }
  return problems;
}

/** The module-map violations of one `src/` file's relative imports. */
function folderViolations(file: string, references: readonly ModuleReference[], map: ModuleMap): ImportViolation[] {
  const from = topFolder(file);
  if (from === undefined) return [];
  const row = map.get(from);
  const violations: ImportViolation[] = [];
  for (const { specifier, line } of references) {
    if (!specifier.startsWith('.')) continue;
    const target = posix.normalize(posix.join(posix.dirname(file), specifier));
    const to = topFolder(target);
    if (to === undefined || to === from) continue;
    if (to === '') {
      const name = posix.basename(target).replace(/\.[cm]?[jt]s$/, '');
      if (ENTRY_MODULES.has(name)) {
        violations.push({ file, line, specifier, reason: 'only the package entry imports src/index.ts and src/sentinel.ts' });
      }
      continue; // the shared root modules (config, options, hooks, errors) are every folder's vocabulary
    }
    // A folder without a row is reported once, by moduleMapProblems.
    if (row === undefined || row.mayImport === 'any' || row.mayImport.has(to)) continue;
    violations.push({
      file,
      line,
      specifier,
      reason: `src/${from}/ may not import src/${to}/: its row in the module map (${MODULE_MAP_DOCUMENT}) does not list it`,
    });
  }
  return violations;
}

function isTypeOnlyImport(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (clause === undefined) return false; // a bare `import 'x'` runs x
  if (clause.isTypeOnly) return true;
  const bindings = clause.namedBindings;
  return clause.name === undefined && bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0
    ? bindings.elements.every((element) => element.isTypeOnly)
    : false;
}

/** Every static import/export, `import()`, `require()` and `import('x').T` type in a source text. */
function moduleReferences(fileName: string, text: string): ModuleReference[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: ModuleReference[] = [];
  const add = (literal: ts.Node, typeOnly: boolean): void => {
    if (!ts.isStringLiteralLike(literal)) return;
    found.push({ specifier: literal.text, line: source.getLineAndCharacterOfPosition(literal.getStart()).line + 1, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node.moduleSpecifier, isTypeOnlyImport(node));
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) add(node.moduleSpecifier, node.isTypeOnly);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, true);
    else if (ts.isCallExpression(node) && node.arguments[0] !== undefined) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) {
        add(node.arguments[0], false);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The violations in one file. `file` is the path relative to the repository root with `/` separators; with `map`,
 * the imports between the folders of `src/` are checked against it too.
 *
 * @example
 * findImportViolations('src/x.ts', "import express from 'express';") // [{ reason: 'src/ must not import a framework…' }]
 */
export function findImportViolations(file: string, text: string, map?: ModuleMap): ImportViolation[] {
  const violations: ImportViolation[] = [];
  const references = moduleReferences(file, text);
  if (map !== undefined) violations.push(...folderViolations(file, references, map));
  if (file.startsWith('src/')) {
    for (const { specifier, line, typeOnly } of references) {
      if (!FRAMEWORK.test(specifier)) continue;
      const exception = TYPE_ONLY_EXCEPTIONS[file];
      if (typeOnly && exception?.test(specifier)) continue;
      if (RUNTIME_EXCEPTIONS[file]?.test(specifier)) continue;
      violations.push({
        file,
        line,
        specifier,
        reason: 'src/ must not import a framework or Redis client (the core is framework-agnostic)',
      });
    }
  }
  const adapter = /^adapters\/([^/]+)\//.exec(file);
  if (adapter !== null) {
    for (const { specifier, line } of references) {
      if (!specifier.startsWith('.')) continue;
      const depth = file.split('/').length - 3; // folders below adapters/<name>/
      const up = '../'.repeat(depth);
      const withinAdapter = !specifier.startsWith(`${up}../`);
      if (withinAdapter) continue;
      const fromAdapterRoot = specifier.slice(up.length);
      const shared = [CORE_ENTRY, GUARD_ENTRY, OPTIONS_ENTRY, MOUNT_ENTRY].includes(fromAdapterRoot);
      if (shared || fromAdapterRoot.startsWith('../node/')) continue;
      violations.push({
        file,
        line,
        specifier,
        reason: `adapters reach the core only through ${CORE_ENTRY} (the public API), ${GUARD_ENTRY}, ${OPTIONS_ENTRY} or ${MOUNT_ENTRY}, and share code only via ../node/`,
      });
    }
  }
  return violations;
}

function sourceFiles(root: string, folder: string): string[] {
  const entries = readdirSync(join(root, folder), { withFileTypes: true });
  return entries.flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(root, path);
    return /\.(?:[cm]?ts|tsx)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * Checks every TypeScript file under `src/` and `adapters/` of `root`, and the module map of its
 * docs/ARCHITECTURE.md against the folders of its `src/`.
 *
 * @example
 * const violations = checkImports(process.cwd()); // [] when the rule holds
 */
export function checkImports(root: string): ImportViolation[] {
  const map = parseModuleMap(readFileSync(join(root, MODULE_MAP_DOCUMENT), 'utf8'));
  const folders = readdirSync(join(root, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  const problems = moduleMapProblems(map, folders, (path) => existsSync(join(root, path)));
  return problems.concat(
    ['src', 'adapters'].flatMap((folder) =>
      sourceFiles(root, folder).flatMap((path) =>
        findImportViolations(relative(root, join(root, path)).split(sep).join('/'), readFileSync(join(root, path), 'utf8'), map),
      ),
    ),
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const violations = checkImports(process.cwd());
  for (const { file, line, specifier, reason } of violations) console.error(`${file}:${line}: '${specifier}': ${reason}`);
  console.log(violations.length === 0 ? 'imports: ok' : `imports: ${violations.length} violation(s)`);
  process.exitCode = violations.length === 0 ? 0 : 1;
}
