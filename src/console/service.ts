/**
 * What the console uses of the service, and its options. Structural, so any service built by `createSentinel()`
 * fits.
 */
import type { ResolvedConfig } from '../config.js';
import type { VerifyAccessTokenOptions } from '../guard/access-token-jwt.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import type { RingKeyInfo } from '../keys/keyring/describe.js';
import type { AccessTokenClaims } from '../token/access-token.js';
import type { EventSource } from '../events/event-log.js';
import type { ConsoleMessages } from './messages/console-messages.js';

/**
 * The parts of the service (`createSentinel()`'s result) the console drives.
 *
 * @example
 * const service: ConsoleService = createSentinel(options);
 */
export interface ConsoleService {
  readonly config: ResolvedConfig;
  /** The service's own routes (the console signs operators in through its authorization endpoint). */
  handle(request: SentinelRequest): Promise<SentinelResponse | null>;
  /** Checks an operator's access token. */
  verifyAccessToken(token: string, options?: VerifyAccessTokenOptions): Promise<AccessTokenClaims>;
  /** Rotates the shared key ring, or with `keysPerAccount` an account's own (the keys page). */
  rotateKeys(options?: { accountId?: string | undefined }): Promise<RingKeyInfo[]>;
  /** Revokes a key of the shared key ring, or with `keysPerAccount` of an account's own (the keys page). */
  revokeKey(kid: string, options?: { accountId?: string | undefined }): Promise<boolean>;
  /** A user's device sessions (the sessions page). */
  listSessions(input: { accountId: string; userId: string }): Promise<readonly ConsoleSessionInfo[]>;
  /** Ends one device session, with back-channel logout to its apps. */
  endSession(input: { accountId: string; sid: string }): Promise<boolean>;
  /** Ends every device session of a user. */
  endUserSessions(input: { accountId: string; userId: string }): Promise<number>;
}

/**
 * A device session as the sessions page shows it (`sentinel.listSessions()`).
 *
 * @example
 * const session: ConsoleSessionInfo = { sid: 'Jq…', authTime: 1_790_000_000, clientIds: ['6f1c…'] };
 */
export interface ConsoleSessionInfo {
  sid: string;
  /** Seconds since the epoch when the user authenticated. */
  authTime: number;
  /** The apps that got tokens through the session. */
  clientIds: readonly string[];
}

/**
 * An operator's role in one account: `admin` may change things, `viewer` only looks; `null` keeps them out.
 *
 * @example
 * const role: OperatorRole = 'viewer';
 */
export type OperatorRole = 'admin' | 'viewer';

/**
 * Who is asking to use the console: the account they signed in to and the user id the service signed in.
 *
 * @example
 * const operator: ConsoleOperator = { accountId: '123456', userId: 'alice' };
 */
export interface ConsoleOperator {
  accountId: string;
  userId: string;
}

/**
 * Options of `createConsole()`.
 *
 * @example
 * const options: ConsoleOptions = { authorize: ({ userId }) => (admins.has(userId) ? 'admin' : null), keysAccountId: '123456' };
 */
export interface ConsoleOptions {
  /**
   * Decides, on every request, what the signed-in user may do in the account: `'admin'`, `'viewer'` or `null`
   * (not an operator). A throwing or rejecting hook fails the request closed (500, nothing changed, `onError` told).
   */
  authorize(operator: ConsoleOperator): OperatorRole | null | Promise<OperatorRole | null>;
  /** Where the console is served, relative to where it is mounted. Default `'/console'`. */
  path?: string | undefined;
  /**
   * The prefix the host mounts the console under, as browsers see it (`''` for none): with `path` it makes the
   * console's address, its sign-in callback (`{issuer origin}{mountPath}{path}/callback`) and its cookies' path.
   * Default: the issuer's path, the console mounted beside the service.
   */
  mountPath?: string | undefined;
  /**
   * The account whose admins may rotate and revoke the service's shared key ring (it signs for every account).
   * Without it, the keys page is read-only for everyone. Default: none.
   */
  keysAccountId?: string | undefined;
  /**
   * Where the audit page reads events: a durable log (`PostgresEventLog` of `sentinel-idp/postgres`, which the host
   * also passes as `onEvent`). Default: this instance's recent events, kept in memory by the console.
   */
  events?: EventSource | undefined;
  /** How many recent events the in-memory buffer keeps when `events` is not given. Default 1000. */
  eventBufferSize?: number | undefined;
  /** Lifetime of a console session, in seconds (absolute). Default 28800 (8 hours). */
  sessionTtl?: number | undefined;
  /**
   * How long a console session lasts without a request, in seconds, from 60 to `sessionTtl`: an operator who walks
   * away from a signed-in console is signed out of it after that. It is also the console sign-in's `max_age`: a device
   * session signed in longer ago asks for the password again. Default 1800 (30 minutes), or `sessionTtl` when shorter.
   */
  idleTtl?: number | undefined;
  /**
   * The console's languages: catalogues by language tag, merged over the bundled English and French (and over
   * English for a new language), and `defaultLocale`, the language when the browser asks for none of them (default
   * `'en'`). Tags are matched as the service's pages match them (`fr-CA` finds `fr`); a `defaultLocale` no catalogue
   * shows is refused at startup; pages of a right-to-left tag (`ar`, `he`, `ku-Arab`) carry `dir="rtl"`.
   */
  i18n?: { defaultLocale?: string | undefined; catalogues?: Readonly<Record<string, Partial<ConsoleMessages>>> | undefined } | undefined;
}
