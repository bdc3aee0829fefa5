/**
 * Finding what a presented token is, for revocation (RFC 7009) and introspection (RFC 7662): a refresh token by
 * its digest, an access token by its signature. Unknown, foreign and malformed tokens are all just `null`.
 */
import type { AccessTokenClaims } from './access-token.js';
import type { SentinelContext } from '../http/context.js';
import { isOAuthError } from '../errors.js';
import { findRefreshRecord, type RefreshGenerations, type RefreshRecord } from './grant-records.js';

/** Which kind of token to try first (`token_type_hint`); the other kind is tried next (RFC 7009 §2.1). */
export type TokenTypeHint = 'access_token' | 'refresh_token';

/** A token found for a client. */
export type FoundToken = { kind: 'refresh_token'; record: RefreshRecord } | { kind: 'access_token'; claims: AccessTokenClaims };

const REVOCATION_CHECKED = Object.freeze({ checkRevocation: true });
const REVOCATION_IGNORED = Object.freeze({ checkRevocation: false });

async function findAccessToken(
  context: SentinelContext,
  token: string,
  accountId: string,
  checkRevocation: boolean,
): Promise<AccessTokenClaims | null> {
  // Only JWS-shaped values can be access tokens; skip the signature work for anything else.
  if (token.split('.').length !== 3) return null;
  try {
    // The service's verifier, as a lookup: the same ring choice and unknown-kid reload as the guard, so a token that
    // another instance signed with a key made since this one last read the ring is found (and revoked) here too.
    return await context.verifyAccessToken(token, { accountId, lookup: checkRevocation ? REVOCATION_CHECKED : REVOCATION_IGNORED });
  } catch (error) {
    if (isOAuthError(error) && error.code === 'invalid_token') return null;
    throw error;
  }
}

/**
 * The token as issued in `accountId` to `clientId`, or `null` (unknown, expired, another client's or account's).
 * With `checkRevocation`, revoked access tokens are `null` too. A refresh token is found while it is its live grant's
 * current, unexpired one; with `refreshGenerations: 'family'`, also once rotated since or expired, as long as its
 * grant lives and its family secret is the grant's (grant-records.ts `findRefreshRecord`).
 *
 * @example const found = await findClientToken(context, { token, accountId, clientId, hint: 'refresh_token', checkRevocation: true, refreshGenerations: 'current' });
 */
export async function findClientToken(
  context: SentinelContext,
  input: {
    token: string;
    accountId: string;
    clientId: string;
    hint?: TokenTypeHint | undefined;
    checkRevocation: boolean;
    refreshGenerations: RefreshGenerations;
  },
): Promise<FoundToken | null> {
  const asRefresh = async (): Promise<FoundToken | null> => {
    const record = await findRefreshRecord(context, input.token, input.refreshGenerations);
    return record !== null && record.accountId === input.accountId && record.clientId === input.clientId
      ? { kind: 'refresh_token', record }
      : null;
  };
  const asAccess = async (): Promise<FoundToken | null> => {
    const claims = await findAccessToken(context, input.token, input.accountId, input.checkRevocation);
    return claims !== null && claims.client_id === input.clientId ? { kind: 'access_token', claims } : null;
  };
  const order = input.hint === 'access_token' ? [asAccess, asRefresh] : [asRefresh, asAccess];
  for (const attempt of order) {
    const found = await attempt();
    if (found !== null) return found;
  }
  return null;
}

/** Reads `token_type_hint`: known values steer the lookup, anything else is ignored (RFC 7009 §2.1). */
export function parseTokenTypeHint(hint: string | undefined): TokenTypeHint | undefined {
  return hint === 'access_token' || hint === 'refresh_token' ? hint : undefined;
}
