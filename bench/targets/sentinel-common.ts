/**
 * Loads sentinel-idp (the bench's build of this repository, bench/library-build.ts) and builds the benchmark instance.
 *
 * The modules are imported dynamically through a computed specifier, typed here against the pinned public API, so
 * the bench typechecks on its own; a module that fails to load makes the row "not available" instead of breaking the
 * run.
 */
import { libraryModuleURL } from '../library-build.js';
import {
  ACCOUNT_ID,
  AGENT_RESOURCE,
  BOT_CLIENT_ID,
  BRAND_ISSUER,
  brandPublicJwksFromEnv,
  CLIENT_ID,
  CLIENT_SECRET,
  DEVICE_CODE_GRANT,
  issuerFor,
  JWT_BEARER_GRANT,
  PASSWORD,
  privateJwkFromEnv,
  redirectUriFor,
  TOKEN_EXCHANGE_GRANT,
  USER_ID,
  USERNAME,
} from '../fixtures.js';

/** The request shape `sentinel.handle` takes (src/http/messages.ts). */
export interface SentinelRequestLike {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  body?: string | Uint8Array | (() => Promise<string | Uint8Array | undefined>) | undefined;
  ip?: string | undefined;
  mountPath?: string | undefined;
}

export interface SentinelResponseLike {
  status: number;
  headers: Record<string, string | string[]>;
  body?: string | undefined;
}

export interface SentinelLike {
  handle(request: SentinelRequestLike): Promise<SentinelResponseLike | null>;
}

interface CoreModule {
  createSentinel(options: Record<string, unknown>): SentinelLike;
  MemoryStore: new (options?: { max?: number }) => unknown;
}

/**
 * Imports a module of the library by its source path relative to the repository root (e.g. 'src/index.js'): the
 * bench's build of it (bench/library-build.ts), or the source itself under `BENCH_LIBRARY=source`.
 */
export async function importRepoModule<T>(path: string): Promise<T> {
  const specifier = libraryModuleURL(path);
  try {
    return (await import(specifier)) as T;
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new Error(`sentinel-idp module ${path} not importable: ${reason}`);
  }
}

/** How the bench instance signs (the `signing` option); the default row uses the library default. */
export type BenchSigning = 'threadpool' | 'sync' | undefined;

/**
 * The bench instance; `store` replaces its MemoryStore (the Redis rows pass a RedisStore). The refresh lifetimes are
 * an hour, as the oidc-provider peer's, so a shared Redis is not left with weeks-long keys.
 */
export async function createBenchSentinel(port: number, signing?: BenchSigning, store?: unknown): Promise<SentinelLike> {
  const core = await importRepoModule<CoreModule>('src/index.js');
  if (typeof core.createSentinel !== 'function') throw new Error('src/index.ts does not export createSentinel yet');
  // In a run with the brand JWT exchange rows every instance trusts the brand (the same configuration for the v2 row).
  // The brand publishes an RS256 and an ES256 key in one set; each brand JWT's kid picks its key.
  const brandJwks = brandPublicJwksFromEnv();
  const exchange =
    brandJwks === undefined ? {} : { trustedIssuers: [{ accountId: ACCOUNT_ID, issuer: BRAND_ISSUER, jwks: { keys: brandJwks } }] };
  return core.createSentinel({
    issuer: issuerFor(port),
    apps: [
      {
        accountId: ACCOUNT_ID,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        redirectUris: [redirectUriFor(port)],
        grantTypes: [
          'client_credentials',
          'authorization_code',
          'refresh_token',
          DEVICE_CODE_GRANT,
          ...(brandJwks === undefined ? [] : [JWT_BEARER_GRANT]),
        ],
        // The MCP server the resource-bound rows ask a token for (RFC 8707).
        resources: [AGENT_RESOURCE],
      },
      // The delegation rows' bot: it exchanges the consumer's token for one naming it in `act` (RFC 8693).
      { accountId: ACCOUNT_ID, clientId: BOT_CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [], grantTypes: [TOKEN_EXCHANGE_GRANT] },
    ],
    ...exchange,
    // The shortest interval (the default is 5 s): the device-poll rows then need a pool of 20,000 codes, not 100,000.
    deviceFlow: { interval: 1 },
    keys: [privateJwkFromEnv()],
    users: {
      // The bench user, and the users the code-exchange rows sign in one session each (`bench-user-7`, …:
      // bench/flow-client.ts), whose ids are their usernames.
      authenticate: async ({ username, password }: { username: string; password: string }) => {
        if (password !== PASSWORD) return null;
        if (username === USERNAME) return { id: USER_ID };
        return username.startsWith(`${USERNAME}-`) && /^\d{1,7}$/.test(username.slice(USERNAME.length + 1)) ? { id: username } : null;
      },
    },
    store: store ?? new core.MemoryStore({ max: 200_000 }),
    refreshToken: { idleTtl: 3600, absoluteTtl: 3600 },
    ...(signing === undefined ? {} : { signing }),
  });
}
