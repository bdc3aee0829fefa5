/**
 * Logout tokens (OpenID Connect Back-Channel Logout 1.0 §2.4): a JWT that tells one app that a session ended.
 *
 * Signed by the key that signs the app's ID tokens (the app already trusts it, and validates a logout token "as an
 * ID token", §2.6), with `typ: logout+jwt` so that no one can pass it off as an ID token or the other way round
 * (RFC 8725 §3.11). It names both the session (`sid`) and the user (`sub`), carries the one `events` member the
 * specification defines, and never a `nonce` (§2.4: its presence is what an app must refuse).
 */
import type { SentinelContext } from '../http/context.js';
import { signJWT } from '../keys/jws.js';
import { randomSecret } from '../lib/random-secrets.js';
import type { SigningAlgorithm } from '../keys/signing-keys.js';
import { idTokenKey } from '../token/id-token.js';

/** The `events` member of a logout token (§2.4): its value is an empty JSON object. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * A logout token's lifetime in seconds. §2.4 asks for a short one; two minutes is the longest the brief allows, and
 * every delivery attempt signs a token of its own, so a retry a minute later still carries a fresh one.
 */
export const LOGOUT_TOKEN_TTL_SECONDS = 120;

/** Whom a logout token is for, and which session ended. */
export interface LogoutTokenInput {
  accountId: string;
  clientId: string;
  userId: string;
  sid: string;
  /** The app's `idTokenSignedResponseAlg`, so the token is signed as its ID tokens are. */
  alg?: SigningAlgorithm | undefined;
}

/**
 * Signs one logout token for one app.
 *
 * @example
 * const token = await signLogoutToken(context, { accountId: '123456', clientId: 'client-a', userId: 'u-1', sid });
 * // header { alg, kid, typ: 'logout+jwt' }, claims { iss, aud, iat, exp, jti, events, sid, sub }
 */
export function signLogoutToken(context: SentinelContext, input: LogoutTokenInput): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  return signJWT(
    context.keys,
    'logout+jwt',
    {
      iss: context.accountIssuer(input.accountId),
      sub: input.userId,
      aud: input.clientId,
      iat,
      exp: iat + LOGOUT_TOKEN_TTL_SECONDS,
      jti: randomSecret(),
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
      sid: input.sid,
    },
    context.config.signing,
    idTokenKey(context, input.alg),
    context.traceContext,
  );
}
