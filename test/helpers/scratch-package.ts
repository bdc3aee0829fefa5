/**
 * A small package written to a temporary folder for the documentation checks to read: a strict `tsconfig.json` and
 * whatever files the test writes, removed after the file.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** The package's folder, and `write(path, text)` to add a file to it (folders made as needed). */
export interface ScratchPackage {
  root: string;
  write(path: string, text: string): void;
}

/**
 * Makes the folder with its `tsconfig.json` now and removes it after the test file.
 *
 * @example const { root, write } = scratchPackage('tsdoc'); write('src/index.ts', 'export const a = 1;');
 */
export function scratchPackage(name: string): ScratchPackage {
  const root = mkdtempSync(join(tmpdir(), `sentinel-idp-${name}-`));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string): void => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write('tsconfig.json', JSON.stringify({ compilerOptions: { strict: true, module: 'ESNext', moduleResolution: 'Bundler' } }));
  return { root, write };
}
