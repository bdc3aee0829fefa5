import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { readEntryPoints } from './scripts/entry-points.mjs';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/**
 * Files that change process-wide state another file would see if they shared a worker: a module mock
 * (`node:crypto`), a stubbed global `fetch`, an `unhandledRejection` listener, the global OpenTelemetry providers,
 * the PKCS#11 module table, a browser per file. They keep a fresh process each; every other file shares its
 * worker's module cache, which spares the import of the service, jose and four frameworks per file (about half the
 * CPU time of the endpoint suites). The setup file still runs before each file, so each gets its own audit sink.
 */
const ISOLATED = [
  'test/timing.test.ts',
  'test/get-jwks.test.ts',
  'test/express-adapter.test.ts',
  'test/telemetry.test.ts',
  'test/hardening-telemetry-grant-type.test.ts',
  'test/examples-telemetry.test.ts',
  'test/pkcs11.test.ts',
  'test/browser/**/*.test.ts',
];

export default defineConfig({
  resolve: {
    // The package's own specifiers resolve to its sources, as package.json "exports" and "sentinel.sources" map them.
    alias: readEntryPoints().map(({ specifier, source }) => ({ find: new RegExp(`^${specifier}$`), replacement: here(`./${source}`) })),
  },
  test: {
    setupFiles: ['test/setup/suite-audit.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: a single worker on the 2-core CI machine, idle while a
    // file waits on Redis, PostgreSQL, a child process or Chromium. Two keep both cores busy.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: ISOLATED, isolate: false } },
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
    ],
    // Off unless asked (`npm run coverage`): instrumenting every run would slow `npm test` in CI.
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts', 'adapters/**/*.ts'],
      reporter: ['text-summary', 'text'],
      reportsDirectory: 'coverage',
      // A skipped or failing file must not hide the figure.
      reportOnFailure: true,
    },
  },
});
