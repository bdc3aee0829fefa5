import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

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
    alias: [
      { find: /^sentinel-idp\/express$/, replacement: here('./adapters/express/index.ts') },
      { find: /^sentinel-idp\/koa$/, replacement: here('./adapters/koa/index.ts') },
      { find: /^sentinel-idp\/fastify$/, replacement: here('./adapters/fastify/index.ts') },
      { find: /^sentinel-idp\/fetch$/, replacement: here('./adapters/fetch/index.ts') },
      { find: /^sentinel-idp\/redis$/, replacement: here('./src/stores/redis.ts') },
      { find: /^sentinel-idp\/postgres$/, replacement: here('./src/postgres/index.ts') },
      { find: /^sentinel-idp\/pkcs11$/, replacement: here('./src/signers/pkcs11.ts') },
      { find: /^sentinel-idp$/, replacement: here('./src/index.ts') },
    ],
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
