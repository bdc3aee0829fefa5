/**
 * The options rule of `npm run docs:check`: every field of `SentinelOptions`, nested option objects included, carries
 * TSDoc with a sentence and a `@defaultValue`, because the options reference is generated from that TSDoc and a field
 * without it would vanish from the reference or show no default.
 */
import { resolve } from 'node:path';
import ts from 'typescript';

/** The options interfaces of `createSentinel()` that the reference documents field by field. */
export const OPTION_INTERFACES = ['SentinelOptions', 'AppOptions'] as const;

/** One options field whose documentation falls short. */
export interface OptionFieldGap {
  /** Dotted path of the field, e.g. `session.idleTtl`. */
  field: string;
  /** `file:line` of the declaration. */
  declaredAt: string;
  missing: ('TSDoc' | '@defaultValue')[];
}

/** The object type literals a field's declared type is made of (`{ … } | undefined`, `false | { … }`). */
function typeLiterals(type: ts.TypeNode | undefined): ts.TypeLiteralNode[] {
  if (type === undefined) return [];
  if (ts.isTypeLiteralNode(type)) return [type];
  if (ts.isUnionTypeNode(type)) return type.types.flatMap((member) => typeLiterals(member));
  if (ts.isParenthesizedTypeNode(type)) return typeLiterals(type.type);
  return [];
}

function checkMembers(
  members: ts.NodeArray<ts.TypeElement>,
  prefix: string,
  root: string,
  gaps: OptionFieldGap[],
  needsDefault = true,
): void {
  for (const member of members) {
    // A method in an inline type (`logger: { warn(message) }`) is the shape of a hook, not an option of its own.
    if (!ts.isPropertySignature(member)) continue;
    const field = `${prefix}${member.name.getText()}`;
    const comment = ts
      .getJSDocCommentsAndTags(member)
      .filter(ts.isJSDoc)
      .map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? '')
      .join('')
      .trim();
    const missing: OptionFieldGap['missing'] = [];
    if (comment === '') missing.push('TSDoc');
    if (needsDefault && !ts.getJSDocTags(member).some((tag) => tag.tagName.text === 'defaultValue')) missing.push('@defaultValue');
    if (missing.length > 0) {
      const file = member.getSourceFile();
      const line = file.getLineAndCharacterOfPosition(member.getStart()).line + 1;
      gaps.push({ field, declaredAt: `${file.fileName.slice(resolve(root).length + 1)}:${line}`, missing });
    }
    for (const literal of typeLiterals(member.type)) checkMembers(literal.members, `${field}.`, root, gaps, needsDefault);
  }
}

/**
 * Lists the fields of the interface exported as `name` from `entry` (relative to `root`) that lack a TSDoc sentence
 * or a `@defaultValue`, at every depth of its inline option objects. Fields inherited from an interface it extends
 * (shared with other types, such as an app's key-bound fields) need their sentence only. Throws when the entry does
 * not export it.
 *
 * @example
 * const gaps = findOptionFieldGaps(process.cwd(), 'src/index.ts', 'SentinelOptions'); // [] when every field is documented
 */
export function findOptionFieldGaps(root: string, entry: string, name: string): OptionFieldGap[] {
  const configPath = resolve(root, 'tsconfig.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  const program = ts.createProgram([resolve(root, entry)], parsed?.options ?? {});
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(resolve(root, entry));
  const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
  const exported = moduleSymbol === undefined ? undefined : checker.getExportsOfModule(moduleSymbol).find((symbol) => symbol.name === name);
  const symbol = exported !== undefined && exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const declaration = symbol?.declarations?.find(ts.isInterfaceDeclaration);
  if (declaration === undefined) throw new Error(`${entry} exports no interface ${name}`);
  const gaps: OptionFieldGap[] = [];
  checkMembers(declaration.members, '', root, gaps);
  for (const clause of declaration.heritageClauses ?? []) {
    for (const base of clause.types) {
      const inherited = checker.getTypeAtLocation(base.expression).getSymbol()?.declarations?.find(ts.isInterfaceDeclaration);
      if (inherited !== undefined) checkMembers(inherited.members, '', root, gaps, false);
    }
  }
  return gaps;
}
