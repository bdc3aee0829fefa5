/**
 * Options of key-based client authentication (RFC 7523) and the per-app fields behind it, as zod shapes that
 * `config/schema.ts` plugs into its schemas.
 */
import { z } from 'zod';
import { openByDesign } from '../lib/strict-options.js';

/**
 * How many fetches of one kind (key sets, client ID metadata documents) an instance runs at once unless told
 * otherwise: far more than legitimate traffic needs (each URL is fetched once per cache lifetime, concurrent requests
 * for one URL share its fetch), few enough that the sockets and buffers they hold stay small (`src/lib/fetch-slots.ts`).
 */
export const DEFAULT_MAX_CONCURRENT_FETCHES = 32;

/**
 * How app key sets behind `jwksUri` are fetched. Private, loopback and link-local addresses are refused unless
 * `allowPrivateAddresses` (development and tests only; it also allows plain http).
 */
export const clientJwksOptionsSchema = z
  .object({
    timeoutMs: z.number().int().positive().max(30_000).default(2000),
    maxBytes: z.number().int().positive().max(1_048_576).default(65_536),
    cacheSeconds: z.number().int().nonnegative().max(86_400).default(300),
    // How long past cacheSeconds a set whose refetch fails keeps serving (jwks-fetch.ts); 0 refuses at once.
    staleIfErrorSeconds: z.number().int().nonnegative().max(86_400).default(3600),
    allowPrivateAddresses: z.boolean().default(false),
    maxConcurrentFetches: z.number().int().positive().max(10_000).default(DEFAULT_MAX_CONCURRENT_FETCHES),
  })
  .prefault({});

/** The options above after defaults. */
export type ClientJwksOptions = z.output<typeof clientJwksOptionsSchema>;

/**
 * How client assertions are judged. `maxLifetimeSeconds` caps how far ahead an assertion's `exp` may lie: its `jti`
 * is remembered in the Store until then, so the cap bounds that memory. RFC 7523 §3 lets a server refuse only an
 * `exp` unreasonably far ahead; an hour is the default because common libraries (Authlib) sign for an hour and
 * offer no way to shorten it.
 */
export const clientAssertionOptionsSchema = z
  .object({
    maxLifetimeSeconds: z.number().int().positive().max(86_400).default(3600),
  })
  .prefault({});

/** The app fields of key-based clients, DPoP and PAR (see `KeyedAppFields`). */
export const keyedAppShape = {
  // The one object of an app whose unknown keys are ignored: a JWK Set may carry members a reader does not know.
  jwks: openByDesign(z.object({ keys: z.array(z.record(z.string(), z.unknown())) }), 'RFC 7517 §5').optional(),
  jwksUri: z.string().optional(),
  requireDPoP: z.boolean().optional(),
  requirePushedAuthorizationRequests: z.boolean().optional(),
  // FAPI 2.0 (issue #34).
  profile: z.literal('fapi2').optional(),
};
