/**
 * ID tokens (OpenID Connect Core §2, §3.1.3.6) for code grants whose scope includes `openid`.
 */
import type { SentinelContext } from '../context.js';
import { signJWT } from '../jwt.js';

/** What an ID token states. */
export interface IDTokenInput {
  accountId: string;
  clientId: string;
  userId: string;
  authTime: number;
  nonce?: string | undefined;
}

/** True when a space-separated scope contains `openid`. */
export function hasOpenIDScope(scope: string | undefined): boolean {
  return scope?.split(' ').includes('openid') === true;
}

/**
 * Signs an ID token: `iss` is the account's issuer, `aud` and `azp` the client id, lifetime `idTokenTtl`.
 * @example const idToken = await issueIDToken(context, { accountId, clientId, userId, authTime, nonce });
 */
export function issueIDToken(context: SentinelContext, input: IDTokenInput): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  return signJWT(
    context.keys,
    'JWT',
    {
      iss: context.accountIssuer(input.accountId),
      sub: input.userId,
      aud: input.clientId,
      azp: input.clientId,
      iat,
      exp: iat + context.config.idTokenTtl,
      auth_time: input.authTime,
      ...(input.nonce === undefined ? {} : { nonce: input.nonce }),
    },
    context.config.signing,
    context.traceContext,
  );
}
