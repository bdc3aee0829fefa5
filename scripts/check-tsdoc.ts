/**
 * The documentation rule (docs/ARCHITECTURE.md): every export of a public entry point carries TSDoc with an
 * `@example`, because that is what users read in their editor and in the API reference. Everything else gets *why*
 * comments where the code needs them, which no tool can check, so only the public exports are looked at. An RFC
 * citation is written where a behaviour implements one, not demanded on every export. Prints one line per gap; exit 1
 * when any.
 *
 * Run: `node --import tsx scripts/check-tsdoc.ts` (from the repository root).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { findOptionFieldGaps, OPTION_INTERFACES } from './check-options-doc.js';
import { readEntryPoints } from './entry-points.mjs';

/** The public entry points' source files, derived from package.json "exports" (scripts/entry-points.mjs). */
export const PUBLIC_ENTRIES: readonly string[] = readEntryPoints().map(({ source }) => source);

/** One exported name whose documentation falls short. */
export interface DocumentationGap {
  entry: string;
  name: string;
  /** `file:line` of the declaration. */
  declaredAt: string;
  missing: ('TSDoc' | '@example')[];
}

/**
 * Lists the exports of `entries` (relative to `root`) that lack TSDoc or an `@example`.
 *
 * @example
 * const gaps = findDocumentationGaps(process.cwd(), PUBLIC_ENTRIES); // [] when every export is documented
 */
export function findDocumentationGaps(root: string, entries: readonly string[]): DocumentationGap[] {
  const configPath = resolve(root, 'tsconfig.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  const program = ts.createProgram(
    entries.map((entry) => resolve(root, entry)),
    parsed?.options ?? {},
  );
  const checker = program.getTypeChecker();
  const gaps: DocumentationGap[] = [];
  for (const entry of entries) {
    const source = program.getSourceFile(resolve(root, entry));
    const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (moduleSymbol === undefined) continue;
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const declaration = symbol.declarations?.[0];
      if (declaration === undefined) continue;
      const docs = ts.getJSDocCommentsAndTags(declaration);
      const missing: DocumentationGap['missing'] = [];
      if (docs.length === 0) missing.push('TSDoc');
      if (!ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === 'example')) missing.push('@example');
      if (missing.length === 0) continue;
      const file = declaration.getSourceFile();
      const line = file.getLineAndCharacterOfPosition(declaration.getStart()).line + 1;
      gaps.push({ entry, name: exported.name, declaredAt: `${file.fileName.slice(resolve(root).length + 1)}:${line}`, missing });
    }
  }
  return gaps;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const gaps = findDocumentationGaps(process.cwd(), PUBLIC_ENTRIES);
  for (const gap of gaps) console.error(`${gap.declaredAt}: ${gap.name} (from ${gap.entry}) lacks ${gap.missing.join(', ')}`);
  console.log(gaps.length === 0 ? 'tsdoc: ok' : `tsdoc: ${gaps.length} export(s) to document`);
  // The options reference is generated from SentinelOptions: each field needs its sentence and default.
  const fieldGaps = OPTION_INTERFACES.flatMap((name) =>
    findOptionFieldGaps(process.cwd(), 'src/index.ts', name).map((gap) => ({ ...gap, field: `${name}.${gap.field}` })),
  );
  for (const gap of fieldGaps) console.error(`${gap.declaredAt}: option ${gap.field} lacks ${gap.missing.join(', ')}`);
  console.log(fieldGaps.length === 0 ? 'options: ok' : `options: ${fieldGaps.length} field(s) to document`);
  process.exitCode = gaps.length === 0 && fieldGaps.length === 0 ? 0 : 1;
}
