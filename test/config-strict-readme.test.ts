/**
 * The documentation's option snippets still start: every ```ts block of README.md, docs/*.md and docs/guides/*.md that calls
 * `createSentinel({ … })` is read with the TypeScript parser, its options object is rebuilt (literals as written,
 * functions as functions, anything else — a variable, `new RedisStore(…)` — as an opaque stand-in) and checked by
 * the same code `createSentinel()` runs. A key the service does not know is a failure wherever it is; a wrong value is
 * one where the snippet wrote the value out. A block that shows a mistake on purpose carries
 * `// options-check: skip` (CONTRIBUTING.md).
 */
import { readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { configProblems } from '../src/config.js';
import { fieldPath } from '../src/lib/strict-options.js';
import { ROOT } from './helpers/dist.js';

/** A value the snippet does not write out (a variable, a call, a constructed store). */
class StandIn {}

interface Snippet {
  where: string;
  code: string;
}

function snippets(): Snippet[] {
  const files = [
    'README.md',
    ...['docs', 'docs/guides'].flatMap((folder) =>
      readdirSync(`${ROOT}${folder}`)
        .filter((name) => name.endsWith('.md'))
        .map((name) => `${folder}/${name}`),
    ),
  ];
  const found: Snippet[] = [];
  for (const file of files) {
    const text = readFileSync(`${ROOT}${file}`, 'utf8');
    for (const block of text.matchAll(/^```(?:ts|typescript|js|javascript)\n([\s\S]*?)^```/gm)) {
      const code = block[1] ?? '';
      if (!/createSentinel\(\s*\{/.test(code) || code.includes('options-check: skip')) continue;
      const line = text.slice(0, block.index).split('\n').length;
      found.push({ where: `${file}:${line}`, code });
    }
  }
  return found;
}

function propertyName(name: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return undefined;
}

/** The value of an expression as far as it is written out; `literal` collects the paths that are. */
function writtenValue(node: ts.Expression, path: (string | number)[], literal: Set<string>): unknown {
  const mark = (value: unknown): unknown => {
    literal.add(fieldPath('', path) || 'options');
    return value;
  };
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node)) {
    return writtenValue(node.expression, path, literal);
  }
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return mark(node.text);
  if (ts.isNumericLiteral(node)) return mark(Number(node.text.replaceAll('_', '')));
  if (node.kind === ts.SyntaxKind.TrueKeyword) return mark(true);
  if (node.kind === ts.SyntaxKind.FalseKeyword) return mark(false);
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.AsteriskToken) {
    const left = writtenValue(node.left, path, new Set());
    const right = writtenValue(node.right, path, new Set());
    return typeof left === 'number' && typeof right === 'number' ? mark(left * right) : new StandIn();
  }
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) return mark(() => undefined);
  if (ts.isArrayLiteralExpression(node)) {
    return mark(node.elements.map((element, index) => writtenValue(element, [...path, index], literal)));
  }
  if (ts.isObjectLiteralExpression(node)) {
    const object: Record<string, unknown> = {};
    for (const property of node.properties) {
      const name = property.name === undefined ? undefined : propertyName(property.name);
      if (name === undefined) continue; // a spread (`...options`) or a computed name: not written out here
      if (ts.isPropertyAssignment(property)) object[name] = writtenValue(property.initializer, [...path, name], literal);
      else if (ts.isMethodDeclaration(property)) object[name] = mark(() => undefined);
      else object[name] = new StandIn(); // shorthand `{ issuer, apps }`
    }
    return mark(object);
  }
  return new StandIn();
}

function optionsOf(code: string): { options: unknown; literal: Set<string> }[] {
  const source = ts.createSourceFile('snippet.ts', code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const calls: { options: unknown; literal: Set<string> }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'createSentinel') {
      const [argument] = node.arguments;
      if (argument !== undefined && ts.isObjectLiteralExpression(argument)) {
        const literal = new Set<string>();
        calls.push({ options: writtenValue(argument, [], literal), literal });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return calls;
}

describe('the documentation’s createSentinel() snippets', () => {
  const found = snippets();

  it('are found (README.md has one, the guides several)', () => {
    expect(found.filter((snippet) => snippet.where.startsWith('README.md')).length).toBeGreaterThanOrEqual(1);
    expect(found.filter((snippet) => snippet.where.startsWith('docs/guides/')).length).toBeGreaterThanOrEqual(8);
  });

  it.each(found.map((snippet) => [snippet.where, snippet] as const))('%s uses only options the service knows', (_where, snippet) => {
    const calls = optionsOf(snippet.code);
    expect(calls.length).toBeGreaterThan(0);
    for (const { options, literal } of calls) {
      const problems = configProblems(options).filter(
        (problem) => problem.message.startsWith('unknown option') || literal.has(problem.field),
      );
      expect(problems).toEqual([]);
    }
  });

  it('would catch a misspelled key or a wrong written-out value in a snippet', () => {
    const [misspelled] = optionsOf('createSentinel({ issuer, keyRotation: { encryptionKey: key, rotateEverySecond: 60 } });');
    expect(configProblems(misspelled?.options).map((problem) => problem.field)).toContain('keyRotation.rotateEverySecond');
    const [wrong] = optionsOf("createSentinel({ issuer, pkce: 'requried' });");
    const problems = configProblems(wrong?.options).filter((problem) => wrong?.literal.has(problem.field));
    expect(problems.map((problem) => problem.field)).toEqual(['pkce']);
  });
});
