/**
 * The options of `createSentinel()`: one zod schema, its defaults, and the resolved configuration object.
 * Every mistake becomes a {@link ConfigurationError} naming the field, at startup rather than at the first request.
 */
import { assertFapi2App } from './assurance/fapi2.js';
import { z } from 'zod';
import { SERVICE_WRITTEN_CLAIMS } from './token/access-token-claims.js';
import { clientAssertionOptionsSchema, clientJwksOptionsSchema } from './client-assertion/options.js';
import { dpopOptionsSchema } from './dpop/options.js';
import { resourceURIProblem } from './apps/resource-uri.js';
import type { AppOptions } from './apps/app-options.js';
import { appSchema, checkedApp } from './apps/app-schema.js';
import type { App, AppStore, GrantType } from './apps/app.js';
import { ConfigurationError, isConfigurationError } from './errors.js';
import { type KeysOf, type OptionProblem, parseOptions, refuseUnknownKeys, strictSchema, throwProblems } from './lib/strict-options.js';
import { catchRejection } from './lib/thenable.js';
import type { SentinelEvent } from './events/sentinel-event.js';
import type { ExternalSigner, JWK } from './keys/signing-keys.js';
import { keyRotationSchema, withDefaultAlgorithms } from './keys/keyring/options.js';
import { issuesIDTokens } from './token/issues-id-tokens.js';
import type { Store } from './stores/store.js';
import { compileTrustProxy } from './http/trusted-proxies.js';
import type { InitialAccessTokenCheck } from './registration/options.js';
import { i18nOptionsSchema } from './i18n/options.js';
import { passkeysOptionsSchema } from './passkeys/options.js';
import { deviceFlowOptionsSchema } from './device/options.js';
import { accountOptionsSchema } from './account/options.js';
import type { ConsumerIdValidator, DelegationPolicy, ErrorContext, LoginView, UserAuthenticator } from './hooks.js';
import { checkTrustedIssuers, type TrustedIssuer, trustedIssuerSchema } from './trusted-issuers/trusted-issuer.js';
import type { SentinelOptions } from './options.js';

/** Where the service writes its warnings (the `logger` option). */
interface ServiceLogger {
  /** Receives one warning line. */
  warn(message: string): void;
}

export type {
  AuthenticatedUser,
  ConsumerIdValidator,
  DelegationPolicy,
  DelegationRequest,
  ErrorContext,
  LoginView,
  UserAuthenticator,
  UserClaims,
  UserClaimsInput,
} from './hooks.js';

function fn<T>(name: string) {
  return z.custom<T>((value) => typeof value === 'function', { message: `${name} must be a function` });
}

const ttlSeconds = z.number().int().positive();

/** A resource indicator an option names must be one a client could ask for (RFC 8707 §2). */
function refuseResourceURI(uri: string, context: z.RefinementCtx): void {
  const problem = resourceURIProblem(uri);
  if (problem !== null) context.addIssue({ code: 'custom', message: problem });
}

// Every key of `users`; `satisfies` keeps the list complete when UserAuthenticator gains a hook.
const USER_AUTHENTICATOR_KEYS = {
  authenticate: true,
  claims: true,
  passkeys: true,
  totpSecret: true,
  recover: true,
} satisfies KeysOf<UserAuthenticator>;

const optionsSchema = z.object({
  issuer: z.string(),
  basePath: z
    .string()
    .regex(/^\/[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/, 'must start with "/" and not end with "/"')
    .default('/sentinel'),
  apps: z.array(appSchema).default([]),
  appStore: z
    .custom<AppStore>((v) => typeof v === 'object' && v !== null && typeof (v as AppStore).findApp === 'function', {
      message: 'must implement findApp() and hasAccount()',
    })
    .optional(),
  users: z
    .custom<UserAuthenticator>(
      (v) =>
        typeof v === 'object' &&
        v !== null &&
        typeof (v as UserAuthenticator).authenticate === 'function' &&
        ['undefined', 'function'].includes(typeof (v as UserAuthenticator).claims),
      { message: 'must have an authenticate() function (and claims, if given, must be a function)' },
    )
    // The host's user service may carry its own members (addUser, a db handle): only a near miss of a hook
    // (`totpSecert`, which would silently switch the second factor off) is refused. Class instances are not checked.
    .superRefine(refuseUnknownKeys(USER_AUTHENTICATOR_KEYS, 'nearMisses'))
    .optional(),
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
  store: z
    .custom<Store>(
      (v) => typeof v === 'object' && v !== null && typeof (v as Store).take === 'function' && typeof (v as Store).swap === 'function',
      { message: 'must implement the Store interface (get, set, take, delete, increment, swap)' },
    )
    .optional(),
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
      // The sessions one user keeps (each browser or device); the oldest beyond it are ended at the next sign-in.
      maxSessionsPerUser: z.number().int().min(1).default(64),
    })
    .prefault({}),
  refreshToken: z.object({ idleTtl: ttlSeconds.default(14 * 86_400), absoluteTtl: ttlSeconds.default(30 * 86_400) }).prefault({}),
  throttle: z
    .object({
      maxFailures: z.number().int().positive().default(5),
      maxFailuresPerIp: z.number().int().positive().default(50),
      windowSeconds: ttlSeconds.default(900),
      digestKey: z.string().min(32).optional(),
    })
    .prefault({}),
  pkce: z.enum(['optional', 'required']).default('optional'),
  signing: z.enum(['threadpool', 'sync']).default('threadpool'),
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
        z.string().min(16, 'must be at least 16 characters'),
        fn<InitialAccessTokenCheck>('registration.initialAccessToken'),
      ]),
      secretOverlapSeconds: z
        .number()
        .int()
        .nonnegative()
        .max(30 * 86_400)
        .default(86_400),
    })
    .optional(),
  dpop: dpopOptionsSchema,
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
  logger: z
    .custom<ServiceLogger>((v) => typeof v === 'object' && v !== null && typeof (v as { warn?: unknown }).warn === 'function', {
      message: 'must have a warn(message) function',
    })
    // An async warn type-checks against `=> void`; the promise it returns, left alone, would end the host's process
    // with an unhandled rejection the first time it rejects.
    .transform((logger): ServiceLogger => ({ warn: (message) => catchRejection(logger.warn(message)) }))
    .optional(),
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
    })
    .prefault({ enabled: false }),
});

// What the options are parsed with: every object in them, at any depth and whenever it was added, refuses a key it
// does not know instead of dropping it (src/lib/strict-options.ts), so a misspelled option cannot fall back to a default.
/** The options schema as it is parsed, strict at every depth (exported for the test that walks it). */
export const strictOptionsSchema = strictSchema(optionsSchema);

export type { SentinelOptions };

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

type Parsed = z.output<typeof optionsSchema>;

/**
 * The validated configuration every handler reads (`sentinel.config`), with defaults filled in; `issuer` is the
 * RFC 8414 §2 issuer without a trailing slash.
 * @example sentinel.config.accessTokenTtl // 3600
 */
export interface ResolvedConfig extends Omit<Parsed, 'apps' | 'issuer' | 'trustedIssuers'> {
  /** The issuer without a trailing slash. */
  issuer: string;
  /** Whether cookies may omit `Secure` (issuer is http on a loopback host). */
  insecureLoopback: boolean;
  apps: App[];
  /** The `trustedIssuers` option, checked. */
  trustedIssuers: TrustedIssuer[];
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function checkIssuer(issuer: string): { issuer: string; insecureLoopback: boolean } {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new ConfigurationError('issuer', 'must be an absolute URL such as https://id.example.com');
  }
  if (url.search !== '' || url.hash !== '' || issuer.includes('#') || issuer.includes('?')) {
    throw new ConfigurationError('issuer', 'must not have a query or fragment (RFC 8414 §2)');
  }
  if (url.username !== '' || url.password !== '') throw new ConfigurationError('issuer', 'must not contain userinfo');
  const insecureLoopback = url.protocol === 'http:' && LOOPBACK.has(url.hostname);
  if (url.protocol !== 'https:' && !insecureLoopback) {
    throw new ConfigurationError('issuer', 'must use https (http is allowed only for localhost and 127.0.0.1)');
  }
  return { issuer: `${url.origin}${url.pathname.replace(/\/+$/, '')}`, insecureLoopback };
}

/**
 * Refuses `dpop.nonce` when nothing in the process can key the nonces (dpop/nonce.ts): they are an HMAC keyed from
 * `keyRotation.encryptionKey`, or else from the private part of the first key of `keys`, which an external signer
 * keeps outside the process. Without this check the service would start and answer every DPoP request with a 500.
 */
function checkNonceKey(parsed: Parsed): void {
  const first = parsed.keys?.[0];
  if (!parsed.dpop.nonce || parsed.keyRotation !== undefined || first === undefined || !('signer' in first)) return;
  throw new ConfigurationError(
    'dpop.nonce',
    'needs keyRotation, or a private JWK first in keys: the nonces are keyed from a private key the process holds, and the first key is an external signer',
  );
}

/**
 * Validates the options and fills in defaults.
 * @throws ConfigurationError naming the first wrong field.
 */
export function resolveConfig(options: SentinelOptions): ResolvedConfig {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError('options', 'must be an object');
  const result = parseOptions(strictOptionsSchema, options, '');
  if (!result.success) throwProblems(result.problems);
  const parsed = result.data;
  const { issuer, insecureLoopback } = checkIssuer(parsed.issuer);
  if (parsed.login.url !== undefined) {
    try {
      new URL(parsed.login.url, 'https://host.invalid');
    } catch {
      throw new ConfigurationError('login.url', 'must be a URL or an absolute path');
    }
  }
  if (parsed.refreshToken.idleTtl > parsed.refreshToken.absoluteTtl) {
    throw new ConfigurationError('refreshToken.idleTtl', 'must not exceed refreshToken.absoluteTtl');
  }
  if (parsed.session.idleTtl > parsed.session.absoluteTtl) {
    throw new ConfigurationError('session.idleTtl', 'must not exceed session.absoluteTtl');
  }
  compileTrustProxy(parsed.trustProxy);
  checkNonceKey(parsed);
  const seen = new Set<string>();
  const apps = parsed.apps.map((entry, index) => {
    const field = `apps[${index}]`;
    const key = `${entry.accountId}\u0000${entry.clientId}`;
    if (seen.has(key)) {
      throw new ConfigurationError(`${field}.clientId`, `client id ${entry.clientId} is already registered in account ${entry.accountId}`);
    }
    seen.add(key);
    const app = checkedApp(entry, field);
    assertFapi2App(app, field);
    return app;
  });
  const algorithmsGiven = (options.keyRotation as { algorithms?: unknown } | undefined)?.algorithms !== undefined;
  const keyRotation = withDefaultAlgorithms(parsed.keyRotation, algorithmsGiven, issuesIDTokens({ ...parsed, apps }));
  const trustedIssuers = checkTrustedIssuers(parsed.trustedIssuers);
  return { ...parsed, issuer, insecureLoopback, apps, keyRotation, trustedIssuers };
}

/**
 * Every problem of `options` at once, for `sentinel-idp config check`: each unknown key and wrong value the schema
 * finds, or, when it finds none, the first of the checks across fields and each app's own problem. Empty when
 * {@link resolveConfig} would accept the options.
 * @example for (const { field, message } of configProblems(options)) console.log(`${field}: ${message}`);
 */
export function configProblems(options: unknown): OptionProblem[] {
  if (typeof options !== 'object' || options === null) return [{ field: 'options', message: 'must be an object' }];
  const result = parseOptions(strictOptionsSchema, options, '');
  if (!result.success) return result.problems;
  const problems: OptionProblem[] = [];
  const collect = (check: () => unknown): void => {
    try {
      check();
    } catch (error) {
      if (!isConfigurationError(error)) throw error;
      const prefix = `sentinel-idp: invalid option ${error.field}: `;
      const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
      if (!problems.some((problem) => problem.field === error.field && problem.message === message)) {
        problems.push({ field: error.field, message });
      }
    }
  };
  collect(() => resolveConfig(options as SentinelOptions));
  result.data.apps.forEach((entry, index) => {
    collect(() => assertFapi2App(checkedApp(entry, `apps[${index}]`), `apps[${index}]`));
  });
  return problems;
}

export type { GrantType };
