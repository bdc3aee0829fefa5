/** Types of scripts/entry-points.mjs (plain JavaScript so that typedoc can load it); see there for the rules. */

/** One public entry point: a subpath of package.json `exports` and the source file built into it. */
export interface EntryPoint {
  /** The key in `exports`: `.`, `./express` … */
  subpath: string;
  /** What users import: `sentinel-idp`, `sentinel-idp/express` … */
  specifier: string;
  /** The built file's name: `./dist/<name>.js`. */
  name: string;
  /** The source file, relative to the repository root. */
  source: string;
}

/** The parts of package.json read here. */
export interface EntryManifest {
  name: string;
  exports?: Record<string, unknown>;
  sentinel?: { sources?: Record<string, unknown> };
}

/** The repository root, with a trailing slash. */
export const REPO_ROOT: string;

/** Disagreements between `exports` and `sentinel.sources`; empty when they agree. */
export function entryPointProblems(manifest: EntryManifest, exists?: (source: string) => boolean): string[];

/** The entry points of a parsed package.json; throws when they disagree. */
export function entryPointsOf(manifest: EntryManifest, exists?: (source: string) => boolean): EntryPoint[];

/** The entry points of the package at `root` (this repository by default); every source must exist. */
export function readEntryPoints(root?: string): EntryPoint[];

/** tsconfig `compilerOptions.paths` mapping each specifier to its source. */
export function tsconfigPaths(entries: readonly EntryPoint[]): Record<string, string[]>;
