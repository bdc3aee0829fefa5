/**
 * Options the service does not understand are refused, never dropped: a misspelled security option
 * (`pkec: 'required'`, `keyRotaton`) silently ignored would leave the service running with its weaker default.
 *
 * One mechanism for every option object: {@link strictSchema} turns each object of a zod schema into a strict one
 * (so an object another option adds later is strict without anyone remembering to), {@link optionProblems} turns
 * zod's issues into `path: message` lines with a "did you mean" suggestion, and {@link assertKnownKeys} does the
 * same for the objects that are typed in TypeScript only.
 */
import { z } from 'zod';
import { ConfigurationError } from '../errors.js';

/** One thing wrong with the options: the full path of the field (`apps[2].redirectUri`) and what is wrong. */
export interface OptionProblem {
  field: string;
  message: string;
}

// Objects whose extra keys are legitimate (their reason is written where they are marked).
const OPEN_BY_DESIGN = new WeakSet<object>();

/**
 * Marks an object schema whose unknown keys are legitimate and are to be ignored, e.g. a JWK Set, which RFC 7517 §5
 * lets carry members a reader does not understand. The reason is for the reader of the call; use it sparingly:
 * every marked object is one where a misspelling goes unnoticed.
 *
 * @example
 * const jwksSchema = openByDesign(z.object({ keys: z.array(jwk) }), 'RFC 7517 §5: extra members are ignored');
 */
export function openByDesign<T extends z.ZodType>(schema: T, reason: string): T {
  if (reason.trim() === '') throw new TypeError('openByDesign needs a reason');
  OPEN_BY_DESIGN.add(schema);
  return schema;
}

type AnySchema = z.core.$ZodType;

function isSchema(value: unknown): value is AnySchema {
  return typeof value === 'object' && value !== null && '_zod' in value;
}

/**
 * A copy of `schema` in which every object (at any depth: inside optional, default, array, union, record, pipe…)
 * refuses unknown keys, except those marked {@link openByDesign}. `z.custom()` values (functions, stores, class
 * instances) are opaque to zod and are left as they are.
 *
 * @example
 * const optionsSchema = strictSchema(z.object({ issuer: z.string(), login: z.object({ url: z.string() }).optional() }));
 */
export function strictSchema<T extends z.ZodType>(schema: T): T {
  return strictCopy(schema, new Map()) as T;
}

function strictCopy(schema: AnySchema, seen: Map<AnySchema, AnySchema>): AnySchema {
  const done = seen.get(schema);
  if (done !== undefined) return done;
  const def = schema._zod.def as unknown as Record<string, unknown>;
  const next: Record<string, unknown> = { ...def };
  let changed = false;
  for (const [name, value] of Object.entries(def)) {
    if (isSchema(value)) {
      const copy = strictCopy(value, seen);
      if (copy !== value) changed = true;
      next[name] = copy;
    } else if (Array.isArray(value) && value.length > 0 && value.every(isSchema)) {
      const copies = value.map((item) => strictCopy(item, seen));
      if (copies.some((copy, index) => copy !== value[index])) changed = true;
      next[name] = copies;
    }
  }
  if (def.type === 'object') {
    const shape = def.shape as Record<string, AnySchema>;
    const strictShape: Record<string, AnySchema> = {};
    for (const [key, value] of Object.entries(shape)) {
      strictShape[key] = strictCopy(value, seen);
      if (strictShape[key] !== value) changed = true;
    }
    next.shape = strictShape;
    if (!OPEN_BY_DESIGN.has(schema) && def.catchall === undefined) {
      next.catchall = z.never();
      changed = true;
    }
  }
  const copy = changed ? z.core.clone(schema, next as unknown as typeof schema._zod.def) : schema;
  if (OPEN_BY_DESIGN.has(schema)) OPEN_BY_DESIGN.add(copy);
  seen.set(schema, copy);
  return copy;
}

/** Edit distance with adjacent transpositions (optimal string alignment), for "did you mean". */
function distance(a: string, b: string): number {
  const columns = b.length + 1;
  const d: number[] = [];
  const at = (i: number, j: number): number => d[i * columns + j] ?? 0;
  for (let i = 0; i <= a.length; i += 1) {
    for (let j = 0; j <= b.length; j += 1) {
      if (i === 0 || j === 0) {
        d[i * columns + j] = i + j;
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      d[i * columns + j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The known key closest to `key`, when one is close enough to be the one meant: the same letters in another case,
 * at most a third of its letters off (a typo, a dropped or doubled letter, a singular for a plural), or the
 * beginning of exactly one known key.
 *
 * @example
 * closestKey('redirectUri', ['redirectUris', 'grantTypes']) // 'redirectUris'
 */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  const lower = key.toLowerCase();
  for (const candidate of known) {
    const d = candidate.toLowerCase() === lower ? 0 : distance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const allowed = Math.max(1, Math.floor(Math.max(key.length, 3) / 3));
  if (bestDistance <= allowed) return best;
  // A shortened name (`retain` for `retainSeconds`): the one known key it begins, if only one.
  if (lower.length < 4) return undefined;
  const longer = known.filter((candidate) => candidate.toLowerCase().startsWith(lower));
  return longer.length === 1 ? longer[0] : undefined;
}

// A key is echoed only when it looks like an option name: a value pasted in the wrong place (a secret) is not.
const PRINTABLE_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]{0,63}$/;

/**
 * The message for an unknown key: `unknown option "pkec" — did you mean "pkce"?`.
 *
 * @example
 * unknownKeyMessage('keyRotaton', ['keys', 'keyRotation']) // 'unknown option "keyRotaton" — did you mean "keyRotation"?'
 */
export function unknownKeyMessage(key: string, known: readonly string[]): string {
  if (!PRINTABLE_KEY.test(key)) return 'unknown option (its name is not shown: it does not look like an option name)';
  const suggestion = closestKey(key, known);
  return `unknown option "${key}"${suggestion === undefined ? '' : ` — did you mean "${suggestion}"?`}`;
}

/**
 * `apps[2].redirectUri` from a path and a parent field.
 *
 * @example
 * fieldPath('apps', [2, 'redirectUri']) // 'apps[2].redirectUri'
 */
export function fieldPath(base: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((field, part) => {
    if (typeof part === 'number') return `${field}[${part}]`;
    const name = String(part);
    const shown = PRINTABLE_KEY.test(name) ? name : '…';
    return field === '' ? shown : `${field}.${shown}`;
  }, base);
}

// zod raises `unrecognized_keys` with the strict object as `inst`; its shape is the set of keys it knows.
const unknownKeysError: z.core.$ZodErrorMap = (issue) => {
  if (issue.code !== 'unrecognized_keys') return undefined;
  const shape = (issue.inst as AnySchema | undefined)?._zod.def as { shape?: Record<string, unknown> } | undefined;
  const known = Object.keys(shape?.shape ?? {});
  // One line per key, in the order of `keys`: optionProblems() splits them into one problem each.
  return issue.keys.map((key) => unknownKeyMessage(key, known)).join('\n');
};

/**
 * Parses `input` with `schema` (made strict by {@link strictSchema}); the data, or every problem found.
 *
 * @example
 * const result = parseOptions(optionsSchema, options, '');
 * if (!result.success) for (const { field, message } of result.problems) console.error(`${field}: ${message}`);
 */
export function parseOptions<T extends z.ZodType>(
  schema: T,
  input: unknown,
  base: string,
): { success: true; data: z.output<T> } | { success: false; problems: OptionProblem[] } {
  const result = schema.safeParse(input, { error: unknownKeysError });
  if (result.success) return { success: true, data: result.data };
  return { success: false, problems: optionProblems(result.error.issues, base) };
}

/**
 * The problems of zod issues, one per unknown key; a union that failed every way is reported through the branch
 * that came closest (fewest problems), so `verifiedTokens: { maxEntrys: 5 }` names the key, not the union.
 *
 * @example
 * optionProblems(result.error.issues, 'apps[0]') // [{ field: 'apps[0].redirectUri', message: 'unknown option …' }]
 */
export function optionProblems(issues: readonly z.core.$ZodIssue[], base: string): OptionProblem[] {
  const problems: OptionProblem[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const lines = issue.message.split('\n');
      issue.keys.forEach((key, index) => {
        problems.push({ field: fieldPath(base, [...issue.path, key]), message: lines[index] ?? `unknown option "${key}"` });
      });
    } else if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const field = fieldPath(base, issue.path);
      // A branch failing only on its type (e.g. `false` of `false | {…}` when an object was given) says least.
      let chosen: OptionProblem[] | undefined;
      for (const branch of issue.errors) {
        if (branch.every((inner) => inner.code === 'invalid_type' && inner.path.length === 0)) continue;
        const branchProblems = optionProblems(branch, field);
        if (chosen === undefined || branchProblems.length < chosen.length) chosen = branchProblems;
      }
      problems.push(...(chosen ?? [{ field: field || 'options', message: issue.message }]));
    } else {
      problems.push({ field: fieldPath(base, issue.path) || 'options', message: issue.message });
    }
  }
  return problems;
}

/**
 * Throws the first problem as a {@link ConfigurationError}; when there are more, its message says how many.
 *
 * @example
 * if (!result.success) throwProblems(result.problems);
 */
export function throwProblems(problems: readonly OptionProblem[]): never {
  const [first, ...rest] = problems;
  if (first === undefined) throw new ConfigurationError('options', 'invalid');
  const more = rest.length === 0 ? '' : ` (and ${rest.length} more: ${rest.map((problem) => problem.field).join(', ')})`;
  throw new ConfigurationError(first.field, `${first.message}${more}`);
}

/**
 * Refuses keys of a TypeScript-only option object that are not in `known` (a record of every key of the type, so
 * that the compiler keeps it complete); `field` names the object. Values that are not plain objects (class
 * instances, which carry their own state) are not checked.
 *
 * @example
 * assertKnownKeys(options, { accountParam: true, consumerParam: true } satisfies KeysOf<RequireAccessTokenOptions>, 'requireAccessToken options');
 */
export function assertKnownKeys(value: unknown, known: Readonly<Record<string, true>>, field: string): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return;
  const names = Object.keys(known);
  const problems: OptionProblem[] = [];
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(known, key)) problems.push({ field: fieldPath(field, [key]), message: unknownKeyMessage(key, names) });
  }
  if (problems.length > 0) throwProblems(problems);
}

/**
 * Every key of `T`, as {@link assertKnownKeys} takes them: `satisfies KeysOf<T>` fails to compile when `T` gains or
 * loses a key the list does not follow.
 *
 * @example
 * const KNOWN = { accountParam: true, consumerParam: true } satisfies KeysOf<RequireAccessTokenOptions>;
 */
export type KeysOf<T> = { [K in keyof Required<T>]: true };

/**
 * A zod refinement doing {@link assertKnownKeys}'s check inside a schema, for a `z.custom()` value the host writes
 * as a plain object of functions: each unknown key becomes its own issue, named by its path. With `nearMisses`, only
 * a key one letter (or one case) away from a known one is refused: for an object the host owns, such as its user
 * service, other members are its own business, but `totpSecert` is a hook that would silently never be called.
 *
 * @example
 * users: z.custom<UserAuthenticator>(isAuthenticator).superRefine(refuseUnknownKeys({ authenticate: true, claims: true }, 'nearMisses'))
 */
export function refuseUnknownKeys(
  known: Readonly<Record<string, true>>,
  mode: 'all' | 'nearMisses' = 'all',
): (value: unknown, context: z.RefinementCtx) => void {
  const names = Object.keys(known);
  const isNearMiss = (key: string): boolean => names.some((name) => distance(key.toLowerCase(), name.toLowerCase()) <= 1);
  return (value, context) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return;
    for (const key of Object.keys(value)) {
      if (Object.hasOwn(known, key) || (mode === 'nearMisses' && !isNearMiss(key))) continue;
      context.addIssue({ code: 'custom', path: [key], message: unknownKeyMessage(key, names) });
    }
  };
}
