import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

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
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup/suite-audit.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
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
