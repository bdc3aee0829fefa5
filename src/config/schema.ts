/**
 * The options schema of `createSentinel()`: what each option accepts and its default. The host's own code (hooks,
 * user service, stores, logger) is checked by host-objects.ts; the checks across fields that zod cannot express are
 * in checks.ts.
 */
import { z } from 'zod';
import { clientAssertionOptionsSchema, clientJwksOptionsSchema, DEFAULT_MAX_CONCURRENT_FETCHES } from '../client-assertion/options.js';
import { dpopOptionsSchema } from '../dpop/options.js';
import { accountOptionsSchema } from '../account/options.js';
import type { AppOptions } from '../apps/app-options.js';
import { resourceURIProblem } from '../apps/resource-uri.js';
import { appSchema } from '../apps/app-schema.js';
import { deviceFlowOptionsSchema } from '../device/options.js';
import type { SentinelEvent } from '../events/sentinel-event.js';
import type { ConsumerIdValidator, DelegationPolicy, ErrorContext, LoginView } from '../hooks.js';
import { NETWORK_MULTIPLE } from '../http/address-bound-default.js';
import { isB64Token } from '../http/authorization-scheme.js';
import { i18nOptionsSchema } from '../i18n/options.js';
import type { ExternalSigner, JWK } from '../keys/signing-keys.js';
import { keyRotationSchema } from '../keys/keyring/options.js';
import { strictSchema } from '../lib/strict-options.js';
import type { SentinelOptions } from '../options.js';
import { parOptionsSchema } from '../par/options.js';
import { passkeysOptionsSchema } from '../passkeys/options.js';
import { DEFAULT_REGISTRATIONS_PER_ADDRESS, type InitialAccessTokenCheck } from '../registration/options.js';
import { SERVICE_WRITTEN_CLAIMS } from '../token/access-token-claims.js';
import { trustedIssuerSchema } from '../trusted-issuers/trusted-issuer.js';
import { appStoreSchema, fn, loggerSchema, storeSchema, usersSchema } from './host-objects.js';

const ttlSeconds = z.number().int().positive();

/** A resource indicator an option names must be one a client could ask for (RFC 8707 §2). */
function refuseResourceURI(uri: string, context: z.RefinementCtx): void {
  const problem = resourceURIProblem(uri);
  if (problem !== null) context.addIssue({ code: 'custom', message: problem });
}

const optionsSchema = z.object({
  issuer: z.string(),
  basePath: z
    .string()
    .regex(/^\/[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/, 'must start with "/" and not end with "/"')
    .default('/sentinel'),
  apps: z.array(appSchema).default([]),
  appStore: appStoreSchema,
  users: usersSchema,
  login: z
    .object({
      url: z.string().optional(),
      /** Renders the built-in login page's HTML. */
      render: fn<(view: LoginView) => string | Promise<string>>('login.render').optional(),
    })
    .prefault({}),
  branding: z
    .object({
      productName: z.string().max(100).default('Sign in'),
      logoUrl: z.string().optional(),
      colors: z.record(z.string().regex(/^[a-z-]+$/), z.string().regex(/^[#(),.% a-zA-Z0-9-]+$/)).default({}),
    })
    .prefault({}),
  keys: z
    .array(z.custom<JWK | { signer: ExternalSigner }>((v) => typeof v === 'object' && v !== null, { message: 'must be a JWK object' }))
    .optional(),
  keyRotation: keyRotationSchema.optional(),
  keysPerAccount: z.boolean().default(false),
  i18n: i18nOptionsSchema,
  passkeys: passkeysOptionsSchema,
  store: storeSchema,
  accessTokenTtl: ttlSeconds.max(86_400).default(3600),
  expiresIn: z.enum(['string', 'number']).default('string'),
  /** `aud` of access tokens, or a function of the account and client; the account id when absent. */
  audience: z.union([z.string().min(1), fn<(context: { accountId: string; clientId: string }) => string>('audience')]).optional(),
  consumerClaim: z
    .string()
    .min(1)
    .refine((name) => !SERVICE_WRITTEN_CLAIMS.has(name), {
      message: 'must not be a claim the service writes itself (sub, aud, cnf, act, …)',
    })
    .optional(),
  consumerId: fn<ConsumerIdValidator>('consumerId').optional(),
  codeTtl: ttlSeconds.max(600).default(60),
  interactionTtl: ttlSeconds.max(3600).default(600),
  // Interactions (pending sign-ins) one client address, and one IPv6 /48, may start per interactionTtl
  // (src/authorize/state/interaction-bound.ts); the network's default is derived in resolve.ts.
  interactionsPerAddress: z.number().int().positive().max(1_000_000_000).default(1000),
  interactionsPerNetwork: z.number().int().positive().max(10_000_000_000).optional(),
  idTokenTtl: ttlSeconds.max(86_400).default(600),
  idTokenClaims: z.boolean().default(false),
  session: z
    .object({
      cookieName: z
        .string()
        .regex(/^[A-Za-z0-9_-]+$/)
        .default('sentinel_session'),
      absoluteTtl: ttlSeconds.default(8 * 3600),
      idleTtl: ttlSeconds.default(3600),
      // The grants one app keeps through one device session; the oldest beyond it are ended (session-index.ts).
      maxGrantsPerApp: z.number().int().min(1).default(16),
      // The apps one device session keeps grants of; the least recently used beyond it are ended (session-index.ts).
      maxAppsPerSession: z.number().int().min(1).default(64),
      // The sessions one user keeps (each browser or device); the oldest beyond it are ended at the next sign-in.
      maxSessionsPerUser: z.number().int().min(1).default(64),
    })
    .prefault({}),
  refreshToken: z.object({ idleTtl: ttlSeconds.default(14 * 86_400), absoluteTtl: ttlSeconds.default(30 * 86_400) }).prefault({}),
  throttle: z
    .object({
      maxFailures: z.number().int().positive().default(5),
      maxFailuresPerIp: z.number().int().positive().default(50),
      // Per IPv6 /48 (src/authorize/state/throttle.ts): bounds the username counters a network can create and the user
      // codes it can guess.
      maxFailuresPerNetwork: z.number().int().positive().default(500),
      windowSeconds: ttlSeconds.default(900),
      digestKey: z.string().min(32).optional(),
    })
    .prefault({}),
  pkce: z.enum(['optional', 'required']).default('optional'),
  signing: z.enum(['threadpool', 'sync']).default('threadpool'),
  // Seconds an external signer (a KMS, PKCS#11) has to answer before the request fails with 500 (signing-deadline.ts).
  signingTimeout: z.number().positive().max(60).default(10),
  // Where the guard checks access-token signatures: 'threadpool' (crypto.verify with a callback, a second core does
  // the curve arithmetic) or 'sync' (main thread). The default is the measured faster one (bench/RESULTS.md).
  verification: z.enum(['threadpool', 'sync']).default('threadpool'),
  // The guard's cache of verified tokens (src/guard/verified-token-cache.ts), or false for none. About 1 KB per entry.
  verifiedTokens: z
    .union([
      z.literal(false),
      z.object({
        maxEntries: z.number().int().positive().default(50_000),
        maxBytes: z
          .number()
          .int()
          .positive()
          .default(48 * 1024 * 1024),
        maxAgeSeconds: z.number().int().positive().max(300).default(60),
      }),
    ])
    .default({ maxEntries: 50_000, maxBytes: 48 * 1024 * 1024, maxAgeSeconds: 60 }),
  bodyLimit: z.number().int().positive().max(1_048_576).default(16_384),
  bodyTimeout: z.number().positive().max(300).default(10),
  jwksMaxAge: z.number().int().nonnegative().default(300),
  trustProxy: z.union([z.boolean(), z.number(), z.array(z.string())]).default(false),
  clockTolerance: z.number().int().nonnegative().max(300).default(5),
  // Seconds after a code redemption or refresh rotation during which presenting the spent credential again is refused
  // without revoking the grant: the client may never have received the answer (docs/store-design.md).
  retryGrace: z.number().int().nonnegative().max(60).default(10),
  registration: z
    .object({
      initialAccessToken: z.union([
        // Sent as `Authorization: Bearer <token>`: a token the header's syntax cannot carry (a space, `!`, `#`, `@`,
        // `:`, an inner `=`) would make every registration a 401. The message never repeats the value, a secret.
        z
          .string()
          .min(16, 'must be at least 16 characters')
          .refine(
            isB64Token,
            'must be an RFC 6750 b64token (letters, digits and "-._~+/", then optional trailing "="), as it is sent as "Bearer <token>"',
          ),
        fn<InitialAccessTokenCheck>('registration.initialAccessToken'),
      ]),
      secretOverlapSeconds: z
        .number()
        .int()
        .nonnegative()
        .max(30 * 86_400)
        .default(86_400),
      // Successful registrations per client address and per IPv6 /48 per hour (src/registration/registration-bound.ts).
      registrationsPerAddress: z.number().int().positive().max(1_000_000_000).default(DEFAULT_REGISTRATIONS_PER_ADDRESS),
      registrationsPerNetwork: z.number().int().positive().max(10_000_000_000).optional(),
    })
    .transform(({ registrationsPerNetwork, ...registration }) => ({
      ...registration,
      registrationsPerNetwork: registrationsPerNetwork ?? NETWORK_MULTIPLE * registration.registrationsPerAddress,
    }))
    .optional(),
  dpop: dpopOptionsSchema,
  // Pushed authorization requests (RFC 9126): the per-address bound on public clients' pushes (src/par/).
  par: parOptionsSchema,
  clientJwks: clientJwksOptionsSchema,
  clientAssertion: clientAssertionOptionsSchema,
  /** Called with the cause of every 500. */
  onError: fn<(error: unknown, context: ErrorContext) => void>('onError').optional(),
  /** Called with each audit event. */
  onEvent: fn<(event: SentinelEvent) => void>('onEvent').optional(),
  telemetry: z
    .object({
      // Account and client ids as metric attributes multiply time series by tenants: opt-in (docs/observability.md).
      identifiersInMetrics: z.boolean().default(false),
    })
    .prefault({}),
  // RFC 7523 / RFC 8693: brand identity providers whose JWTs name an account's consumers, and the host's say over
  // which app may act for whom (src/trusted-issuers/, src/token/token-exchange-grant.ts).
  trustedIssuers: z.array(trustedIssuerSchema).default([]),
  authorizeDelegation: fn<DelegationPolicy>('authorizeDelegation').optional(),
  logger: loggerSchema,
  // MCP authorization (issue #33): RFC 8707 resource indicators and client ID metadata documents.
  defaultResources: z.array(z.string().superRefine(refuseResourceURI)).default([]),
  // The device authorization grant (RFC 8628): src/device/.
  deviceFlow: deviceFlowOptionsSchema,
  // The end user's account page (issue #35).
  account: accountOptionsSchema,
  clientIdMetadataDocuments: z
    .object({
      enabled: z.boolean(),
      /** Which client_id URLs may be resolved: host names (`*.` for a domain), or a function of the URL and account. */
      allow: z
        .union([
          z.array(z.string().regex(/^(\*\.)?[a-z0-9.-]+$/, 'must be a lower-case host name, or *. and one')),
          fn<(clientId: string, context: { accountId: string }) => boolean | Promise<boolean>>('clientIdMetadataDocuments.allow'),
        ])
        .optional(),
      allowPrivateAddresses: z.boolean().default(false),
      maxConcurrentFetches: z.number().int().positive().max(10_000).default(DEFAULT_MAX_CONCURRENT_FETCHES),
    })
    .prefault({ enabled: false }),
});

// What the options are parsed with: every object in them, at any depth and whenever it was added, refuses a key it
// does not know instead of dropping it (src/lib/strict-options.ts), so a misspelled option cannot fall back to a default.
/** The options schema as it is parsed, strict at every depth (exported for the test that walks it). */
export const strictOptionsSchema = strictSchema(optionsSchema);

// The documented interface (src/options.ts) and the schema cannot drift: the build fails unless each accepts exactly
// what the other does, with the same keys at the top and in every nested options object. `apps` is compared apart,
// because AppOptions takes readonly arrays the schema's mutable ones do not.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type ObjectPart<T> = Exclude<NonNullable<T>, boolean | string | number | readonly unknown[] | ((...args: never[]) => unknown)>;
type SameShape<A, B> =
  Same<A, B> extends true
    ? Same<keyof A, keyof B> extends true
      ? { [K in keyof A]-?: Same<keyof ObjectPart<A[K]>, keyof ObjectPart<B[K & keyof B]>> }[keyof A]
      : false
    : false;
type Holds<T extends true> = T;
type SchemaInput = z.input<typeof optionsSchema>;
type AppInput = NonNullable<SchemaInput['apps']>[number];
// biome-ignore lint/correctness/noUnusedVariables: a compile-time assertion; it is checked, never used
type OptionsMatchSchema = [
  Holds<SameShape<Omit<SentinelOptions, 'apps'>, Omit<SchemaInput, 'apps'>>>,
  Holds<Same<keyof AppOptions, keyof AppInput>>,
  Holds<AppInput extends AppOptions ? true : false>,
];

/** The options as the schema returns them: every default filled in, before the checks across fields. */
export type Parsed = z.output<typeof optionsSchema>;
