/**
 * The `registration` option: dynamic client registration (RFC 7591) and management (RFC 7592) over HTTP.
 */
import type { AppStore } from '../apps/app.js';
import { ConfigurationError } from '../errors.js';

/**
 * Decides whether an initial access token may register apps in an account (RFC 7591 §3: the registration
 * endpoint may require one). May be async. Besides the account it gets the client address (`trustProxy` applied;
 * absent when unknown) and the request headers, for the host's own limits or logs; wrong tokens are already
 * throttled per address by the service (`throttle.maxFailuresPerIp` per `throttle.windowSeconds`).
 *
 * @example
 * const initialAccessToken: InitialAccessTokenCheck = async (token, { accountId, ip }) => tokens.allows(token, accountId, ip);
 */
export type InitialAccessTokenCheck = (
  token: string,
  context: { accountId: string; ip?: string | undefined; headers: Readonly<Record<string, string | string[] | undefined>> },
) => boolean | Promise<boolean>;

/**
 * The `registration` option of `createSentinel()`: dynamic client registration (RFC 7591 §3) and client
 * configuration (RFC 7592 §2), protected by an initial access token (RFC 7591 §3).
 *
 * @example
 * createSentinel({ …, appStore, registration: { initialAccessToken: process.env.SENTINEL_REGISTRATION_TOKEN!, secretOverlapSeconds: 3600 } });
 */
export interface RegistrationOptions {
  /**
   * One token for every account, or a function deciding per account. A string must be at least 16 characters of an
   * RFC 6750 §2.1 b64token (letters, digits, `-._~+/`, then optional trailing `=`): clients send it as `Bearer <token>`.
   */
  initialAccessToken: string | InitialAccessTokenCheck;
  /** How long a rotated-out client secret keeps working, in seconds. Default 86 400 (24 h); 0 ends it at once. */
  secretOverlapSeconds?: number;
  /**
   * Successful registrations one client address (IPv6: one /64) may make per hour, across instances; more get `429`
   * with `Retry-After`. Default 100 (`DEFAULT_REGISTRATIONS_PER_ADDRESS`).
   */
  registrationsPerAddress?: number;
  /** Successful registrations one IPv6 /48 may make per hour across its /64s. Default ten times `registrationsPerAddress`. */
  registrationsPerNetwork?: number;
}

/**
 * The default of `registrationsPerAddress`: 100 apps an hour from one address. Each app is a permanent record, so a
 * holder of the initial access token (often one token for every account, sometimes shipped in an app) must not
 * create them without end; a deployment script or a CI run creating an app per job stays well under it.
 */
export const DEFAULT_REGISTRATIONS_PER_ADDRESS = 100;

const MANAGEMENT_METHODS = ['saveApp', 'updateApp', 'deleteApp', 'rotateClientSecret'] as const;

/** Refuses, at startup, an app store that cannot do what the registration endpoints need. */
export function assertRegistrationStore(apps: AppStore): void {
  const missing = MANAGEMENT_METHODS.filter((method) => typeof apps[method] !== 'function');
  if (missing.length > 0) {
    throw new ConfigurationError(
      'registration',
      `needs an appStore with ${missing.join(', ')} (MemoryAppStore and PostgresAppStore have them)`,
    );
  }
}
