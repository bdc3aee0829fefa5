/**
 * Options of the step-up suites: the fixture user, who may have a TOTP secret (asked for at every sign-in, or only
 * when a request needs more than a password) and passkeys, and the events the service emitted.
 */
import { generateSecret } from 'otplib';
import type { PasskeyHooks, SentinelEvent, SentinelOptions } from '../../src/index.js';
import { ACCOUNT, baseOptions, CLIENT_ID, CLIENT_SECRET, PASSWORD, REDIRECT_URI, USER_ID, USERNAME } from './fixtures.js';
import { pkcePair } from './pkce.js';

/** How the fixture user's second factor is set up. */
export interface StepUpUser {
  /** `always`: `authenticate` asks for the TOTP step; `available`: the user has a secret but is not asked; `none`. */
  totp: 'always' | 'available' | 'none';
  /** The user's passkeys, when the suite signs in with one. */
  passkeys?: PasskeyHooks | undefined;
}

/** The options and what the test reads back. */
export interface StepUpFixture {
  options: SentinelOptions;
  secret: string;
  events: SentinelEvent[];
}

/** Base options with the fixture user's second factor as `user` says, and an event sink. */
export function stepUpFixture(user: StepUpUser, overrides: Partial<SentinelOptions> = {}): StepUpFixture {
  const secret = generateSecret();
  const events: SentinelEvent[] = [];
  const base = baseOptions();
  const options = baseOptions({
    users: {
      authenticate: async ({ accountId, username, password }) =>
        accountId === ACCOUNT && username === USERNAME && password === PASSWORD
          ? user.totp === 'always'
            ? { id: USER_ID, secondFactor: 'totp' }
            : { id: USER_ID }
          : null,
      totpSecret: async ({ userId }) => (userId === USER_ID && user.totp !== 'none' ? secret : null),
      ...(user.passkeys === undefined ? {} : { passkeys: user.passkeys }),
    },
    onEvent: (event) => {
      events.push(event);
      base.onEvent?.(event);
    },
    ...overrides,
  });
  return { options, secret, events };
}

/** The confidential fixture client, as the exchange helpers take it. */
export const CONFIDENTIAL = { clientId: CLIENT_ID, secret: CLIENT_SECRET, redirectUri: REDIRECT_URI };

/** An authorize URL (path on the issuer) for the confidential client with PKCE; returns the verifier too. */
export function stepUpAuthorize(params: Record<string, string> = {}): { url: string; verifier: string } {
  const { verifier, challenge } = pkcePair();
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    state: 'st-1',
    nonce: 'n-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...params,
  });
  return { url: `http://localhost/sentinel/api/account/${ACCOUNT}/authorize?${query}`, verifier };
}
