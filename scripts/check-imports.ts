/**
 * The import rule of the architecture (docs/ARCHITECTURE.md):
 * - `src/` never imports a framework or a Redis client: express, koa, fastify, their `@koa/*` / `@fastify/*` /
 *   `koa-*` / `express-*` / `fastify-*` companions, ioredis. The one exception is `import type` from ioredis in
 *   `src/stores/redis.ts`, which is erased at build time and loads nothing.
 * - `adapters/<name>/` reach the core only through its public API, `../../src/index.js`, and the bearer guard's
 *   shared logic, `../../src/guard/bearer-request.js`; they share Node code only through `../node/…`; nothing else outside their
 *   own folder.
 *
 * Run: `node --import tsx scripts/check-imports.ts` (exit 1 and one line per violation when the rule is broken).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
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
 * The violations in one file. `file` is the path relative to the repository root with `/` separators.
 *
 * @example
 * findImportViolations('src/x.ts', "import express from 'express';") // [{ reason: 'src/ must not import a framework…' }]
 */
export function findImportViolations(file: string, text: string): ImportViolation[] {
  const violations: ImportViolation[] = [];
  const references = moduleReferences(file, text);
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
      if (fromAdapterRoot === CORE_ENTRY || fromAdapterRoot === GUARD_ENTRY || fromAdapterRoot.startsWith('../node/')) continue;
      violations.push({
        file,
        line,
        specifier,
        reason: `adapters reach the core only through ${CORE_ENTRY} (the public API) or ${GUARD_ENTRY}, and share code only via ../node/`,
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
 * Checks every TypeScript file under `src/` and `adapters/` of `root`.
 *
 * @example
 * const violations = checkImports(process.cwd()); // [] when the rule holds
 */
export function checkImports(root: string): ImportViolation[] {
  return ['src', 'adapters'].flatMap((folder) =>
    sourceFiles(root, folder).flatMap((path) =>
      findImportViolations(relative(root, join(root, path)).split(sep).join('/'), readFileSync(join(root, path), 'utf8')),
    ),
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const violations = checkImports(process.cwd());
  for (const { file, line, specifier, reason } of violations) console.error(`${file}:${line}: '${specifier}': ${reason}`);
  console.log(violations.length === 0 ? 'imports: ok' : `imports: ${violations.length} violation(s)`);
  process.exitCode = violations.length === 0 ? 0 : 1;
}
