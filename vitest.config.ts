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
  'test/logout-keepalive.test.ts',
  'test/logout-delivery-uri.test.ts',
  'test/logout-keepalive-tls.test.ts',
  'test/get-jwks.test.ts',
  'test/mcp-client-id-metadata-dns.test.ts',
  'test/registration-logout-target-dns.test.ts',
  'test/outbound-dns-bound.test.ts',
  'test/logout-delivery-starved.test.ts',
  'test/express-adapter.test.ts',
  'test/telemetry.test.ts',
  'test/telemetry-document-clients.test.ts',
  'test/hardening-telemetry-grant-type.test.ts',
  'test/exchange-telemetry.test.ts',
  // counts node:crypto's signature checks through a module mock
  'test/exchange-issuer-keys.test.ts',
  'test/telemetry-sdk-failures.test.ts',
  'test/examples-telemetry.test.ts',
  'test/pkcs11.test.ts',
  'test/pkcs11-waiting.test.ts',
  'test/pkcs11-startup.test.ts',
  'test/pkcs11-token-label.test.ts',
  'test/browser/**/*.test.ts',
];

/**
 * Files that need something besides Node and the sources: Redis (and Redis Cluster), PostgreSQL, SoftHSM2, Chromium,
 * a built `dist/`, a child process (a server, the CLI, an example, git, a Go, Ruby or Python client). `npm run
 * test:unit` leaves them out; `npm test` runs them all. A file that starts needing a service belongs here: the unit
 * run points every service at a closed port and `test/setup/no-services.ts` refuses processes and service ports, so
 * it fails until the file is listed.
 */
const SERVICE_FILES = [
  // Chromium
  'test/browser/**/*.test.ts',
  // Redis or Redis Cluster (some beside a memory-store half that needs nothing)
  'test/store-redis.test.ts',
  'test/store-redis-faults.test.ts',
  // A reply lost with its connection, through a proxy in front of a private redis-server
  'test/store-redis-resend.test.ts',
  'test/throttle-zero-counters.test.ts',
  'test/store-redis-cluster.test.ts',
  'test/store-fail-closed.test.ts',
  'test/service-faults.test.ts',
  'test/oauth-redis.test.ts',
  'test/health-redis.test.ts',
  'test/hardening-redis-eviction.test.ts',
  'test/hardening-security-state-redis.test.ts',
  // Public clients' pushes per address, counted across two instances sharing Redis
  'test/par-push-throttle-redis.test.ts',
  // Public clients' device authorizations per address, counted across two instances sharing Redis
  'test/device-authorization-throttle-redis.test.ts',
  // Interactions started per address, counted across two instances sharing Redis
  'test/authorize-interaction-bound-redis.test.ts',
  'test/device-entry-bound-redis.test.ts',
  // Successful registrations per address, counted across two instances sharing Redis
  'test/registration-bound.test.ts',
  // Replay markers lost with a private redis-server restarted empty
  'test/replay-epoch.test.ts',
  // The CLI's store URLs against the real Redis and PostgreSQL
  'test/cli-url-passwords.test.ts',
  'test/hardening-keyring-rs256.test.ts',
  'test/hardening-registration-tokens.test.ts',
  'test/login-throttle-concurrency.test.ts',
  // The throttle's digest key across a restart of a private Redis that loses it
  'test/throttle-digest-redis.test.ts',
  'test/concurrency.test.ts',
  'test/race-keyring.test.ts',
  'test/guard-userinfo-key-reload.test.ts',
  'test/race-second-factor.test.ts',
  'test/race-session.test.ts',
  'test/race-totp-order.test.ts',
  // The passkey counter's compare-and-set, on MemoryStore and two instances sharing Redis
  'test/passkey-counter-race.test.ts',
  'test/passkey-registration-race.test.ts',
  // A recovery code spent only with the pending step it completes, on MemoryStore and two instances sharing Redis
  'test/recovery-code-order.test.ts',
  // The device flow's races (RFC 8628), on MemoryStore and Redis
  'test/device-race.test.ts',
  // A brand JWT's jti, single use on MemoryStore and Redis
  'test/exchange-jti.test.ts',
  // A delegated token's revocation (never on the subject's grant), on MemoryStore and Redis
  'test/exchange-delegated-revocation.test.ts',
  // A user's concurrent session-index writes, on MemoryStore and Redis (one instance and two)
  'test/session-index-contention.test.ts',
  // A code exchange whose session-index write a full private Redis refuses (OOM), undone so the retry works
  'test/index-undo-redis.test.ts',
  // A child process: the exchange example as a user runs it
  'test/exchange-example.test.ts',
  // Redis and child processes: servers sharing one store
  'test/key-rotation-redis.test.ts',
  'test/multi-instance.test.ts',
  // PostgreSQL
  'test/console-event-log-postgres.test.ts',
  'test/app-store-postgres.test.ts',
  'test/postgres-error-detail.test.ts',
  'test/trusted-issuers-postgres.test.ts',
  'test/postgres-faults.test.ts',
  'test/postgres-migrate-isolation.test.ts',
  'test/postgres-listener-heartbeat.test.ts',
  'test/cli-apps-disabled-postgres.test.ts',
  'test/postgres-app-store-close-race.test.ts',
  'test/postgres-event-log-close-race.test.ts',
  'test/registration.test.ts',
  'test/config-strict-apps.test.ts',
  'test/hardening-registration-events.test.ts',
  'test/hardening-registration-put-secret.test.ts',
  'test/hardening-registration-stored-uris.test.ts',
  'test/hardening-registration-uris.test.ts',
  'test/hardening-userinfo-app-gone.test.ts',
  'test/race-registration-put.test.ts',
  // Sessions and back-channel logout (PostgreSQL registry; Redis and Redis Cluster deliveries)
  'test/logout-app-postgres.test.ts',
  'test/logout-delivery-redis.test.ts',
  // A logout queued while a delivery of the same session and app is in flight, on MemoryStore and Redis
  'test/logout-redelivery.test.ts',
  // Signing out after the same user signed in again in the browser, on MemoryStore and two instances sharing Redis
  'test/logout-reauthentication.test.ts',
  'test/cli-sessions-redis.test.ts',
  // SoftHSM2
  'test/pkcs11.test.ts',
  'test/pkcs11-waiting.test.ts',
  'test/pkcs11-startup.test.ts',
  'test/pkcs11-token-label.test.ts',
  // the built dist/ (the CLI, the packed tarball), the examples, git, the Go, Ruby and Python clients
  'test/cli.test.ts',
  'test/cli-keys-redis.test.ts',
  'test/cli-redis-database.test.ts',
  'test/cli-postgres.test.ts',
  'test/config-strict-cli.test.ts',
  'test/key-generation-lock.test.ts',
  'test/package.test.ts',
  'test/examples.test.ts',
  'test/examples-telemetry.test.ts',
  'test/commit-subjects.test.ts',
  'test/interop-clients.test.ts',
  // MCP authorization: the openssl command (a loopback certificate), https on loopback, the MCP example's processes
  'test/mcp-client-id-metadata.test.ts',
  'test/mcp-client-id-metadata-oracle.test.ts',
  'test/fetch-limits.test.ts',
  'test/client-id-metadata-session.test.ts',
  'test/client-id-metadata-redirector.test.ts',
  // The openssl command (a loopback certificate): kept-alive logout connections over https
  'test/logout-keepalive-tls.test.ts',
  'test/mcp-example.test.ts',
  // The device-flow CLI example (npm run example:device) in its own process
  'test/device-cli-example.test.ts',
  // The openssl command the key ring's encryption key is documented to be made with, run in a shell
  'test/keyring-encryption-key-command.test.ts',
];

/** `npm run test:unit`: every file but SERVICE_FILES, with each service required and pointed at a closed port. */
const UNIT = process.env.SENTINEL_TEST_SET === 'unit';
const UNIT_ENV = {
  REDIS_URL: 'redis://127.0.0.1:1',
  REDIS_SERVER: '/nonexistent/redis-server',
  SENTINEL_REDIS_CLUSTER: '127.0.0.1:1',
  POSTGRES_URL: 'postgres://postgres@127.0.0.1:1/unit',
  SOFTHSM_LIBRARY: '/nonexistent/libsofthsm2.so',
  CHROMIUM_PATH: '/nonexistent/chromium',
  SENTINEL_REQUIRE_REDIS: '1',
  SENTINEL_REQUIRE_POSTGRES: '1',
  SENTINEL_REQUIRE_SOFTHSM: '1',
  SENTINEL_REQUIRE_BROWSER: '1',
  SENTINEL_REQUIRE_INTEROP: '1',
};
const unitExclude = UNIT ? SERVICE_FILES : [];

export default defineConfig({
  resolve: {
    // The package's own specifiers resolve to its sources, as package.json "exports" and "sentinel.sources" map them.
    alias: readEntryPoints().map(({ specifier, source }) => ({ find: new RegExp(`^${specifier}$`), replacement: here(`./${source}`) })),
  },
  test: {
    setupFiles: ['test/setup/suite-audit.ts', ...(UNIT ? ['test/setup/no-services.ts'] : [])],
    env: UNIT ? UNIT_ENV : {},
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: a single worker on the 2-core CI machine, idle while a
    // file waits on Redis, PostgreSQL, a child process or Chromium. Two keep both cores busy.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: [...ISOLATED, ...unitExclude], isolate: false } },
      { extends: true, test: { name: 'isolated', include: ISOLATED, exclude: unitExclude } },
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
