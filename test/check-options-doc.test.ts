import { describe, expect, it } from 'vitest';
import { scratchPackage } from './helpers/scratch-package.js';
import { findOptionFieldGaps, OPTION_INTERFACES } from '../scripts/check-options-doc.js';
import { ROOT } from './helpers/dist.js';

const { root, write } = scratchPackage('options-doc');
write(
  'src/options.ts',
  `/** Options. @example const o: Options = { name: 'x' }; */
export interface Options {
  /** The name. @defaultValue required */
  name: string;
  undocumented?: number;
  /** Says no default. */
  noDefault?: boolean;
  /** A nested object. @defaultValue \`{}\` */
  nested?:
    | false
    | {
        /** Documented. @defaultValue \`1\` */
        good?: number;
        bad?: number;
      }
    | undefined;
  /** A hook holder. @defaultValue none */
  logger?: { warn(message: string): void };
}
`,
);
write(
  'src/entry.ts',
  `/** Shared fields. */
export interface Shared {
  /** Documented, without a default: enough for an inherited field. */
  sharedGood?: string;
  sharedBare?: string;
}

/** Entry options. @example const e: Entry = { id: 'x' }; */
export interface Entry extends Shared {
  /** The id. @defaultValue required */
  id: string;
}
`,
);
write('src/index.ts', "export type { Options } from './options.js';\nexport type { Entry } from './entry.js';\n");

describe('check-options-doc', () => {
  const gaps = findOptionFieldGaps(root, 'src/index.ts', 'Options');
  const byField = Object.fromEntries(gaps.map((gap) => [gap.field, gap.missing]));

  it('accepts a field with a sentence and a @defaultValue, at any depth', () => {
    expect(byField.name).toBeUndefined();
    expect(byField.nested).toBeUndefined();
    expect(byField['nested.good']).toBeUndefined();
  });

  it('reports a field without TSDoc or without a default, nested ones included, where it is declared', () => {
    expect(byField.undocumented).toEqual(['TSDoc', '@defaultValue']);
    expect(byField.noDefault).toEqual(['@defaultValue']);
    expect(byField['nested.bad']).toEqual(['TSDoc', '@defaultValue']);
    expect(gaps.find((gap) => gap.field === 'undocumented')?.declaredAt).toBe('src/options.ts:5');
  });

  it('does not ask for documentation of a method in an inline hook type', () => {
    expect(byField['logger.warn']).toBeUndefined();
    expect(gaps).toHaveLength(3);
  });

  it('asks inherited fields for their sentence only', () => {
    const inherited = Object.fromEntries(findOptionFieldGaps(root, 'src/index.ts', 'Entry').map((gap) => [gap.field, gap.missing]));
    expect(inherited).toEqual({ sharedBare: ['TSDoc'] });
  });

  it('refuses an entry that does not export the interface', () => {
    expect(() => findOptionFieldGaps(root, 'src/index.ts', 'Missing')).toThrow(/exports no interface Missing/);
  });

  it.each(OPTION_INTERFACES)(
    'finds every field of %s documented',
    (name) => {
      expect(findOptionFieldGaps(ROOT, 'src/index.ts', name)).toEqual([]);
    },
    60_000,
  );
});
