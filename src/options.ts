/**
 * The options of `createSentinel()` as hosts write them, one TSDoc line per field: the API reference's options page
 * is generated from this file. `config/schema.ts` holds the zod schema that checks them, and the compiler refuses
 * the build when this interface and the schema's input type differ in either direction (a field, its type or its
 * optionality). Durations are in seconds unless a name says otherwise.
 */
import type { AppOptions } from './apps/app-options.js';
import type { AppStore } from './apps/app.js';
import type { SentinelEvent } from './events/sentinel-event.js';
import type { ConsumerIdValidator, DelegationPolicy, ErrorContext, LoginView, UserAuthenticator } from './hooks.js';
import type { Messages } from './i18n/messages.js';
import type { ExternalSigner, JWK, SigningAlgorithm } from './keys/signing-keys.js';
import type { InitialAccessTokenCheck } from './registration/options.js';
import type { Store } from './stores/store.js';
import type { TrustedIssuer } from './trusted-issuers/trusted-issuer.js';

/** An asymmetric JWS algorithm a DPoP proof may use. */
type ProofAlgorithm = 'ES256' | 'ES384' | 'EdDSA' | 'RS256' | 'PS256';

/**
 * Options of `createSentinel()`. Every field is checked at startup: a wrong value or an unknown key at any depth is a
 * `ConfigurationError` naming its path. The endpoints follow RFC 6749 and docs/platform-operations.md.
 *
 * @example const options: SentinelOptions = { issuer: 'https://id.example.com', apps, users, keys };
 */
export interface SentinelOptions {
  /** Public base URL: https (http only on `localhost`/`127.0.0.1`), no query or fragment; each account's issuer is `{issuer}{basePath}/api/account/{accountId}`. @defaultValue required */
  issuer: string;
  /** Prefix of every endpoint: starts with `/`, does not end with one. @defaultValue `'/sentinel'` */
  basePath?: string | undefined;
  /** The registered applications, kept in memory (give `apps` or `appStore`, not both). @defaultValue `[]` */
  apps?: AppOptions[] | undefined;
  /** Your own application registry, such as `PostgresAppStore` (must implement `findApp()` and `hasAccount()`). @defaultValue an in-memory store of `apps` */
  appStore?: AppStore | undefined;
  /** The host's user service behind the built-in login page: `authenticate()`, and optionally claims, passkeys and a second factor. @defaultValue none (no built-in login) */
  users?: UserAuthenticator | undefined;
  /** Where users sign in: your own page, or a render function for the built-in one. @defaultValue the built-in page */
  login?:
    | {
        /** Your own login page (a URL or an absolute path); finish with `sentinel.completeLogin(interactionId, { userId })`. @defaultValue none */
        url?: string | undefined;
        /** Renders the built-in login page's HTML from its view model: a non-empty string, else the 500 page. @defaultValue the built-in template */
        render?: ((view: LoginView) => string | Promise<string>) | undefined;
      }
    | undefined;
  /** The login page's look. @defaultValue `{ productName: 'Sign in', colors: {} }` */
  branding?:
    | {
        /** Page title and the name a passkey is made for (at most 100 characters). @defaultValue `'Sign in'` */
        productName?: string | undefined;
        /** URL of a logo shown above the form. @defaultValue none */
        logoUrl?: string | undefined;
        /** CSS custom properties (`accent: '#0b5'`), your own names allowed for a `login.render` page. @defaultValue `{}` */
        colors?: Record<string, string> | undefined;
      }
    | undefined;
  /** Private JWKs (or `{ signer }` external signers, e.g. an HSM): the first signs, all verify and are published (give `keys` or `keyRotation`, not both; an empty list is refused, as a secret that failed to load). @defaultValue left out: temporary ES256 and RS256 keys generated per process, and a warning */
  keys?: (JWK | { signer: ExternalSigner })[] | undefined;
  /** A key ring kept in the Store and rotated across instances (docs/guides/keys-and-hsm.md). @defaultValue none */
  keyRotation?:
    | {
        /** 32 random bytes, base64url: seals the private parts in the store (AES-256-GCM). @defaultValue required */
        encryptionKey: string;
        /** How long a key signs before the next one takes over. @defaultValue required */
        rotateEverySeconds: number;
        /** How long a new key is published in the JWKS before it signs. @defaultValue required */
        prePublishSeconds: number;
        /** How long a retired key stays published to verify tokens it signed. @defaultValue the longest token lifetime plus `clockTolerance` */
        retainSeconds?: number | undefined;
        /** How often each instance re-reads the ring (at most 60). @defaultValue `30` */
        refreshSeconds?: number | undefined;
        /** One active key per algorithm, each named once; the first signs by default. @defaultValue `['ES256']`, plus `'RS256'` when ID tokens can be issued */
        algorithms?: SigningAlgorithm[] | undefined;
        /** Prefix of the ring's store keys, so several issuers can share one store. @defaultValue `'default'` */
        name?: string | undefined;
      }
    | undefined;
  /** With `keyRotation`: one key ring and `jwks_uri` per account issuer. @defaultValue `false` */
  keysPerAccount?: boolean | undefined;
  /** Languages of the browser pages: the fallback language and your own catalogues. @defaultValue `{ defaultLocale: 'en', catalogues: {} }` */
  i18n?:
    | {
        /** Language tag used when the browser asks for none the service has; a bundled or `catalogues` language (`es-MX` shows `es`). @defaultValue `'en'` */
        defaultLocale?: string | undefined;
        /** Message catalogues by language tag: new languages, or strings of a bundled one replaced. @defaultValue `{}` */
        catalogues?: Record<string, Partial<Messages>> | undefined;
      }
    | undefined;
  /** The WebAuthn relying party passkeys are made for and checked against. @defaultValue the issuer's host and origin */
  passkeys?:
    | {
        /** The RP id; a registrable suffix of the issuer's host lets sibling hosts share passkeys. A host name: an IP address makes `createSentinel` throw, as browsers refuse it (an issuer on one, such as `http://127.0.0.1:3000`, is warned of when `users.passkeys` is given). @defaultValue the issuer's host name */
        rpId?: string | undefined;
        /** Shown by the browser when a passkey is made. @defaultValue `branding.productName` */
        rpName?: string | undefined;
        /** Accepted origins of the pages that use passkeys: https (http only on localhost), each on `rpId` or a host under it, else `createSentinel` throws. @defaultValue the issuer's origin */
        origins?: string[] | undefined;
        /** Offer to add a passkey after a password sign-in, to users who have none yet. @defaultValue `false` */
        offerRegistration?: boolean | undefined;
        /** The most passkeys one user may have in an account (1 to 200, the account page lists 200): a user at it adds none until one is removed. @defaultValue `20` */
        maxPerUser?: number | undefined;
        /** Passkey sign-in attempts that did not sign in allowed per client address (IPv6: per /64) per `throttle.windowSeconds`; more get 429. Each attempt asks `users.passkeys.list` for a user the caller names and checks a signature. @defaultValue `100` */
        maxFailuresPerIp?: number | undefined;
        /** Such attempts allowed per IPv6 /48 across its /64s per `throttle.windowSeconds` (IPv4 addresses are not counted per network), so a large IPv6 range cannot fill the login throttle's counter area with one counter per /64; more get 429. @defaultValue ten times `maxFailuresPerIp` */
        maxFailuresPerNetwork?: number | undefined;
      }
    | undefined;
  /** Where codes, sessions, interactions, grants, revocations and throttle counters live; `RedisStore` for several instances. @defaultValue `new MemoryStore()` */
  store?: Store | undefined;
  /** Access-token lifetime (at most 86 400). @defaultValue `3600` */
  accessTokenTtl?: number | undefined;
  /** `expires_in` of the v1 and v2 app-token paths as a string of digits or a number; the account token endpoint always answers a number. @defaultValue `'string'` */
  expiresIn?: 'string' | 'number' | undefined;
  /**
   * `aud` of access tokens: a string, or a function of the account and client (for a delegated token, the client it
   * was delegated from, whose `aud` it keeps). A string that is also a resource apps may ask for (`defaultResources`,
   * an app's `resources`) is refused: the two kinds of token would pass in each other's place. A function must return
   * a non-empty string at once (not a promise); any other answer fails the request with `500 server_error` (to
   * `onError`) and issues no token. @defaultValue the account id
   */
  audience?: string | ((context: { accountId: string; clientId: string }) => string) | undefined;
  /** Also carry the consumer id under this claim name, which may not be one the service writes (`sub`, `aud`, `cnf`, …). @defaultValue none */
  consumerClaim?: string | undefined;
  /** Decides whether a consumer id (`state` of the v2 token request) is valid. @defaultValue a lower-case UUID or 64 lower-case hex digits */
  consumerId?: ConsumerIdValidator | undefined;
  /** Authorization-code lifetime (at most 600). @defaultValue `60` */
  codeTtl?: number | undefined;
  /** Time a user has to finish a login (at most 3600). @defaultValue `600` */
  interactionTtl?: number | undefined;
  /** Sign-ins one client address (IPv6: one /64) may start per `interactionTtl`, across instances: each unauthenticated visit to `/authorize` (or the account page) stores one; more go back to the app as `temporarily_unavailable` (the account page: 429). @defaultValue `1000` */
  interactionsPerAddress?: number | undefined;
  /** Such sign-ins one IPv6 /48 may start per `interactionTtl` across its /64s (IPv4 addresses are not counted per network), so a large IPv6 range cannot fill the counters' store area. @defaultValue ten times `interactionsPerAddress` */
  interactionsPerNetwork?: number | undefined;
  /** ID-token lifetime (at most 86 400). @defaultValue `600` */
  idTokenTtl?: number | undefined;
  /** Also put the scope-released `users.claims` in ID tokens, not only at UserInfo. @defaultValue `false` */
  idTokenClaims?: boolean | undefined;
  /** The device session cookie, its timeouts, how many grants one app and how many apps keep grants through it, and how many sessions one user keeps. @defaultValue `{ cookieName: 'sentinel_session', absoluteTtl: 28800, idleTtl: 3600, maxGrantsPerApp: 16, maxAppsPerSession: 64, maxSessionsPerUser: 64 }` */
  session?:
    | {
        /**
         * Name of the session cookie (letters, digits, `_` and `-`), and the stem of the service's other cookies. Not
         * `__Host-…` (its cookies have the service's path, not `/`), nor `__Secure-…` with an `http://localhost` issuer.
         * @defaultValue `'sentinel_session'`
         */
        cookieName?: string | undefined;
        /** Longest a session lives, however active. @defaultValue `28800` (8 h) */
        absoluteTtl?: number | undefined;
        /** A session unused this long ends (at most `absoluteTtl`). @defaultValue `3600` */
        idleTtl?: number | undefined;
        /**
         * The most grants (each with its own refresh token) one app keeps through one device session. When a code
         * exchange would add one more, the oldest grants of that app in that session are revoked first, with a
         * `grant.ended` event each (docs/guides/sessions-and-logout.md#how-many-grants-a-session-keeps). An integer ≥ 1.
         * @defaultValue `16`
         */
        maxGrantsPerApp?: number | undefined;
        /**
         * The most apps one device session keeps grants of. When a code exchange of one more app would pass it, every
         * grant of the app used least recently through that session is revoked first, with a `grant.ended` event
         * (`reason: 'session-apps-limit'`) each (docs/guides/sessions-and-logout.md#how-many-grants-a-session-keeps).
         * An integer ≥ 1.
         * @defaultValue `64`
         */
        maxAppsPerSession?: number | undefined;
        /**
         * The most device sessions (browsers and devices) one user keeps. A sign-in that would add one more ends the
         * user's oldest sessions as a logout would, grants and logout tokens included, with a `session.ended` event
         * (`reason: 'sessions-limit'`) each (docs/guides/sessions-and-logout.md#how-many-sessions-a-user-keeps). An
         * integer ≥ 1.
         * @defaultValue `64`
         */
        maxSessionsPerUser?: number | undefined;
      }
    | undefined;
  /** Refresh-token lifetimes; a refresh token rotates on every use. @defaultValue `{ idleTtl: 1209600, absoluteTtl: 2592000 }` */
  refreshToken?:
    | {
        /** A refresh token unused this long expires (at most `absoluteTtl`). @defaultValue `1209600` (14 days) */
        idleTtl?: number | undefined;
        /** Longest a grant's refresh tokens live, however often rotated. @defaultValue `2592000` (30 days) */
        absoluteTtl?: number | undefined;
      }
    | undefined;
  /** Failed logins and wrong registration tokens allowed per window. @defaultValue `{ maxFailures: 5, maxFailuresPerIp: 50, maxFailuresPerNetwork: 500, windowSeconds: 900 }` */
  throttle?:
    | {
        /** Failed logins per account and username per window. @defaultValue `5` */
        maxFailures?: number | undefined;
        /** Failed logins (and wrong registration tokens) per client address per window. @defaultValue `50` */
        maxFailuresPerIp?: number | undefined;
        /**
         * Failed logins, wrong device user codes and wrong registration tokens per IPv6 /48 per window, across its /64s
         * (each has `maxFailuresPerIp`): bounds how many counters (a username's for each new name typed, an address's
         * for each /64) one network can fill the store with, and how many user codes it can guess. @defaultValue `500`
         */
        maxFailuresPerNetwork?: number | undefined;
        /** Length of the fixed counting window. @defaultValue `900` */
        windowSeconds?: number | undefined;
        /**
         * Keys the digests of typed usernames (in counters' store keys and in `login.*` events), at least 32 characters,
         * the same on every instance. @defaultValue derived from `keyRotation.encryptionKey`, else a random key kept in the store
         */
        digestKey?: string | undefined;
      }
    | undefined;
  /** `'required'`: every authorization request needs PKCE S256 (public clients always do). @defaultValue `'optional'` */
  pkce?: 'optional' | 'required' | undefined;
  /** Where signatures are made: `'threadpool'` (libuv's pool, every core) or `'sync'` (main thread, lowest idle latency). @defaultValue `'threadpool'` */
  signing?: 'threadpool' | 'sync' | undefined;
  /**
   * Seconds an external signer (`keys: [{ signer }]`: a KMS, `sentinel-idp/pkcs11`) has to answer (at most 60); past
   * it the request fails with `500 server_error`, reported to `onError`, and nothing is issued. @defaultValue `10`
   */
  signingTimeout?: number | undefined;
  /** Where the guard checks access-token signatures, and the brand JWT grants check an ECDSA or EdDSA brand signature (RSA ones always run on the main thread, cheaper than the hand-off): `'threadpool'` or `'sync'`; the default is the faster one measured in bench/RESULTS.md. @defaultValue `'threadpool'` */
  verification?: 'threadpool' | 'sync' | undefined;
  /** The guard's cache of verified tokens (about 1 KB per entry), or `false` for none. @defaultValue `{ maxEntries: 50000, maxBytes: 50331648, maxAgeSeconds: 60 }` */
  verifiedTokens?:
    | false
    | {
        /** Most tokens kept. @defaultValue `50000` */
        maxEntries?: number | undefined;
        /** Most bytes kept. @defaultValue `50331648` (48 MiB) */
        maxBytes?: number | undefined;
        /** Longest a verified token is trusted without a new check (at most 300). @defaultValue `60` */
        maxAgeSeconds?: number | undefined;
      }
    | undefined;
  /** Largest request body in bytes (at most 1 MiB); a larger one gets 413. @defaultValue `16384` */
  bodyLimit?: number | undefined;
  /** Seconds a request body may take to arrive (at most 300); a slower one gets 408. @defaultValue `10` */
  bodyTimeout?: number | undefined;
  /** `Cache-Control: max-age` of the JWKS and the metadata documents; also how long the registry's answer behind a metadata document's exchange grants is kept. @defaultValue `300` */
  jwksMaxAge?: number | undefined;
  /** Where the client address comes from: `false` the socket; a hop count or your proxies' addresses/CIDRs; `true` the left-most `X-Forwarded-For` entry. @defaultValue `false` */
  trustProxy?: boolean | number | string[] | undefined;
  /** Clock skew allowed when verifying tokens and proofs (at most 300); a fapi2 app's client assertions and token-endpoint and PAR DPoP proofs get it within 10–60 s. @defaultValue `5` */
  clockTolerance?: number | undefined;
  /** Seconds after a code redemption or refresh rotation during which the spent credential is refused without revoking the grant (at most 60; `0`: always revoke). @defaultValue `10` */
  retryGrace?: number | undefined;
  /** Dynamic client registration and management over HTTP (RFC 7591/7592). @defaultValue off */
  registration?:
    | {
        /** One initial access token for every account (at least 16 characters of an RFC 6750 b64token: letters, digits, `-._~+/`, trailing `=`), or a function deciding per account. @defaultValue required */
        initialAccessToken: string | InitialAccessTokenCheck;
        /** How long a rotated-out client secret keeps working (at most 30 days; `0` ends it at once). @defaultValue `86400` */
        secretOverlapSeconds?: number | undefined;
        /** Successful registrations one client address (IPv6: one /64) may make per hour, across instances; more get 429 with `Retry-After`. Wrong tokens are throttled apart (`throttle.maxFailuresPerIp`). @defaultValue `100` */
        registrationsPerAddress?: number | undefined;
        /** Successful registrations one IPv6 /48 may make per hour across its /64s (IPv4 addresses are not counted per network); more get 429 with `Retry-After`. @defaultValue ten times `registrationsPerAddress` */
        registrationsPerNetwork?: number | undefined;
      }
    | undefined;
  /** DPoP proofs (RFC 9449). @defaultValue `{ nonce: false, proofMaxAgeSeconds: 60, pushProofsPerAddress: 1000, algorithms: all five }` */
  dpop?:
    | {
        /** Demand server nonces (`use_dpop_nonce` and a `DPoP-Nonce` header). @defaultValue `false` */
        nonce?: boolean | undefined;
        /** How old a proof's `iat` may be, and how long its `jti` is remembered (at most 600). @defaultValue `60` */
        proofMaxAgeSeconds?: number | undefined;
        /** DPoP-bound pushed requests of public clients one address (IPv6: one /64) may make per proof window; more get 429. @defaultValue `1000` */
        pushProofsPerAddress?: number | undefined;
        /** Proof algorithms accepted. @defaultValue `['ES256', 'ES384', 'EdDSA', 'RS256', 'PS256']` */
        algorithms?: ProofAlgorithm[] | undefined;
      }
    | undefined;
  /** Pushed authorization requests (RFC 9126). @defaultValue `{ publicPushesPerAddress: 1000, publicPushesPerNetwork: 10000 }` */
  par?:
    | {
        /** Pushes of public clients (whose callers show no credential) one client address (IPv6: one /64) may make per 60 s, across instances; more get 429 with `Retry-After`. Confidential clients are not counted. @defaultValue `1000` */
        publicPushesPerAddress?: number | undefined;
        /** Such pushes one IPv6 /48 may make per 60 s across its /64s (IPv4 addresses are not counted per network), so a large IPv6 range cannot fill the counters' store area; more get 429 with `Retry-After`. @defaultValue ten times `publicPushesPerAddress` */
        publicPushesPerNetwork?: number | undefined;
      }
    | undefined;
  /** How the `jwksUri` key sets of `private_key_jwt` apps are fetched. @defaultValue `{ timeoutMs: 2000, maxBytes: 65536, cacheSeconds: 300, staleIfErrorSeconds: 3600, allowPrivateAddresses: false, maxConcurrentFetches: 32 }` */
  clientJwks?:
    | {
        /** Deadline of one fetch in milliseconds (at most 30 000). @defaultValue `2000` */
        timeoutMs?: number | undefined;
        /** Largest key set read (at most 1 MiB). @defaultValue `65536` */
        maxBytes?: number | undefined;
        /** How long a fetched key set is kept (at most 86 400). @defaultValue `300` */
        cacheSeconds?: number | undefined;
        /** How long past `cacheSeconds` the last good key set keeps serving while fetching it anew fails (at most 86 400; `0`: not at all); a fetch that succeeds replaces it at once. @defaultValue `3600` */
        staleIfErrorSeconds?: number | undefined;
        /** Allow loopback, private and link-local addresses and plain http: development and tests only. @defaultValue `false` */
        allowPrivateAddresses?: boolean | undefined;
        /** How many key sets (apps' and trusted issuers' alike) this instance fetches at once (1 to 10 000); a fetch beyond it is refused at once, as a failed one is, and not remembered. @defaultValue `32` */
        maxConcurrentFetches?: number | undefined;
      }
    | undefined;
  /** How client assertions (`private_key_jwt`, RFC 7523) are judged. @defaultValue `{ maxLifetimeSeconds: 3600 }` */
  clientAssertion?:
    | {
        /** How far ahead an assertion's `exp` may lie; its `jti` is remembered that long (at most 86 400). @defaultValue `3600` */
        maxLifetimeSeconds?: number | undefined;
      }
    | undefined;
  /** Called with the cause of every 500, of failures in the background, of a rejected `onEvent` promise (route `onEvent`), and of a client ID metadata document that could not be retrieved (route `client-id-metadata`); a throw or rejection here is swallowed. @defaultValue none */
  onError?: ((error: unknown, context: ErrorContext) => void) | undefined;
  /** Called with each audit event (`token.issued`, `login.failed`, …); events never carry a secret. A throw fails the request with server_error, except after a change the request cannot undo (a spent code or refresh token, a saved app: then it goes to `onError`); a returned promise is not awaited (its rejection goes to `onError`). @defaultValue none */
  onEvent?: ((event: SentinelEvent) => void) | undefined;
  /** Metrics options. @defaultValue `{ identifiersInMetrics: false }` */
  telemetry?:
    | {
        /** Add account and client ids to metric attributes (one time series per tenant: opt-in; never a client named by its metadata document, which anyone can mint). @defaultValue `false` */
        identifiersInMetrics?: boolean | undefined;
      }
    | undefined;
  /** Brand identity providers whose signed JWTs name an account's consumers (RFC 7523 JWT bearer, RFC 8693 token exchange); a PostgreSQL registry adds its `trusted_issuers`. @defaultValue `[]` */
  trustedIssuers?: TrustedIssuer[] | undefined;
  /** Decides whether an app may act for a subject in a token exchange (RFC 8693 §4.1); `false` refuses it. @defaultValue every app registered for the token-exchange grant may */
  authorizeDelegation?: DelegationPolicy | undefined;
  /** Receives the service's warnings (at startup, and a client's key set served stale); one that throws or rejects is dropped. @defaultValue `console` */
  logger?:
    | {
        /** Receives one warning line. */
        warn(message: string): void;
      }
    | undefined;
  // MCP authorization (issue #33): RFC 8707 resource indicators and client ID metadata documents.
  /**
   * The protected resources (RFC 8707: absolute https URIs, no fragment) an app without its own `resources` may ask
   * tokens for with `resource`: the MCP servers a dynamically registered or client-ID-metadata-document client may
   * reach. A token asked for one carries it as its `aud`. @defaultValue `[]` (such apps may name no resource)
   */
  defaultResources?: string[] | undefined;
  /**
   * Client ID metadata documents: a `client_id` that is an https URL names a public client whose metadata (its
   * `client_name` and `redirect_uris`) the service fetches from that URL, with the guards of `jwksUri` fetches (at most
   * 5 KiB, no redirects, kept as its caching headers say and 24 hours at most). A document that cannot be retrieved is
   * one `invalid_client` whatever the cause, which goes to `onError` (route `client-id-metadata`).
   * @defaultValue `{ enabled: false }`
   */
  clientIdMetadataDocuments?:
    | {
        /** Accept such client ids at the authorization, PAR and token endpoints. @defaultValue `false` */
        enabled: boolean;
        /** Which documents may be used: host names (`'agents.example.com'`, `'*.example.com'` for its subdomains) or a function deciding per client id and account. @defaultValue any public host */
        allow?: string[] | ((clientId: string, context: { accountId: string }) => boolean | Promise<boolean>) | undefined;
        /** Allow loopback, private and link-local addresses, and a port in the URL: development and tests only, as `clientJwks.allowPrivateAddresses`. @defaultValue `false` */
        allowPrivateAddresses?: boolean | undefined;
        /** How many documents this instance fetches at once (1 to 10 000); a `client_id` whose document would be one more is refused at once with the `invalid_client` of a document that could not be retrieved, and not remembered. @defaultValue `32` */
        maxConcurrentFetches?: number | undefined;
      }
    | undefined;
  /** The device authorization grant (RFC 8628), for apps registered for `urn:ietf:params:oauth:grant-type:device_code`. @defaultValue `{ expiresIn: 600, interval: 5, publicAuthorizationsPerAddress: 1000, publicAuthorizationsPerNetwork: 10000 }` */
  deviceFlow?:
    | {
        /** Seconds a device code and its user code stay usable (60 to 3600). @defaultValue `600` */
        expiresIn?: number | undefined;
        /** Seconds a device must wait between polls (1 to 60); each `slow_down` answer adds 5 for that device. @defaultValue `5` */
        interval?: number | undefined;
        /** Device authorization requests of public clients (whose callers show no credential) one client address (IPv6: one /64) may make per `2 × expiresIn` (the time a device record is kept), across instances; more get 429 with `Retry-After`. Confidential clients are not counted. @defaultValue `1000` */
        publicAuthorizationsPerAddress?: number | undefined;
        /** Such requests one IPv6 /48 may make per `2 × expiresIn` across its /64s (IPv4 addresses are not counted per network), so a large IPv6 range cannot fill the counters' store area; more get 429 with `Retry-After`. @defaultValue ten times `publicAuthorizationsPerAddress` */
        publicAuthorizationsPerNetwork?: number | undefined;
      }
    | undefined;
  // The end user's account page (issue #35).
  /** The end user's account page at `{issuer}{basePath}/api/account/{accountId}/account`: sessions, passkeys, connected apps (docs/guides/account-page.md). @defaultValue `{ enabled: false, maxSignInAge: 600 }` */
  account?:
    | {
        /** Serve the account page; off, its path answers 404. @defaultValue `false` */
        enabled?: boolean | undefined;
        /** Seconds a sign-in may be old to add or remove a passkey on the page (an integer, 60–3600); an older one signs in again first. @defaultValue `600` */
        maxSignInAge?: number | undefined;
      }
    | undefined;
}
