import { describe, expect, it } from 'vitest';
import { scratchPackage } from './helpers/scratch-package.js';
import { findDocumentationGaps } from '../scripts/check-tsdoc.js';

const { root, write } = scratchPackage('tsdoc');
write(
  'src/parts.ts',
  `/**
 * Fully documented (RFC 6749 §5.2).
 * @example complete()
 */
export function complete(): number { return 1; }

/** Has no example (RFC 6749 §4.1). */
export function noExample(): number { return 2; }

/**
 * Names no RFC section, which the rule does not ask for.
 * @example noReference()
 */
export const noReference = (): number => 3;

/** Internal: not re-exported by the entry point, so not checked. */
export function internalHelper(): number { return 4; }

export interface Bare { value: string }
`,
);
write('src/index.ts', "export { complete, noExample, noReference } from './parts.js';\nexport type { Bare } from './parts.js';\n");

describe('check-tsdoc', () => {
  const gaps = findDocumentationGaps(root, ['src/index.ts']);
  const byName = Object.fromEntries(gaps.map((gap) => [gap.name, gap]));

  it('accepts an export with TSDoc and an @example, with or without an RFC section', () => {
    expect(byName.complete).toBeUndefined();
    expect(byName.noReference).toBeUndefined();
  });

  it('checks only what the entry point exports', () => {
    expect(byName.internalHelper).toBeUndefined();
  });

  it('reports what each re-exported declaration lacks, where it is declared', () => {
    expect(byName.noExample).toMatchObject({ entry: 'src/index.ts', declaredAt: 'src/parts.ts:8', missing: ['@example'] });
    expect(byName.Bare?.missing).toEqual(['TSDoc', '@example']);
    expect(gaps).toHaveLength(2);
  });
});
