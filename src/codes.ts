/**
 * Authorization codes (RFC 6749 §4.1.2, §10.5): 256 random bits, stored under their SHA-256 digest with everything
 * the token endpoint must check, single use through the Store's atomic `take`.
 *
 * This file is the contract between the authorize side (which issues codes) and the token endpoint (which redeems
 * them).
 */
import type { SentinelContext } from './context.js';
import { digest, randomSecret } from './secrets.js';

/** What a code stands for. Persisted as JSON under `code:{sha256(code)}`. */
export interface CodeRecord {
  accountId: string;
  clientId: string;
  /** The redirect URI the code was delivered to. */
  redirectUri: string;
  /** Whether the authorize request carried `redirect_uri` (then the token request must repeat it, §4.1.3). */
  redirectUriInRequest: boolean;
  userId: string;
  /** Seconds since the epoch when the user authenticated. */
  authTime: number;
  /** Requested scope, if any (space-separated). */
  scope?: string | undefined;
  /** PKCE S256 challenge (RFC 7636), if the request had one. */
  codeChallenge?: string | undefined;
  /** OpenID Connect nonce, if the request had one. */
  nonce?: string | undefined;
  /** DPoP key thumbprint the code is bound to (`dpop_jkt`, RFC 9449 §10). */
  dpopJkt?: string | undefined;
  /** Seconds since the epoch when the code was issued. */
  issuedAt: number;
}

/** The store key of a code. */
export function codeKey(code: string): string {
  return `code:${digest(code)}`;
}

/** Issues a code for `record`; returns the plain code (to put in the redirect, never to log). */
export async function issueCode(context: SentinelContext, record: Omit<CodeRecord, 'issuedAt'>): Promise<string> {
  const code = randomSecret();
  const stored: CodeRecord = { ...record, issuedAt: Math.floor(Date.now() / 1000) };
  await context.store.set(codeKey(code), JSON.stringify(stored), context.config.codeTtl * 1000);
  context.emit({ type: 'code.issued', accountId: record.accountId, clientId: record.clientId, userId: record.userId });
  return code;
}

/** The store key of the replay marker a redeemed code leaves behind. */
function usedCodeKey(code: string): string {
  return `code-used:${digest(code)}`;
}

/** Outcome of {@link redeemCode}: the code's record, or the grant issued from an earlier redemption of it. */
export type CodeRedemption = { kind: 'redeemed'; record: CodeRecord } | { kind: 'replayed'; grantId: string };

/**
 * Redeems a code once (RFC 6749 §4.1.2: single use). The first caller gets the record and leaves a
 * `code-used:{sha256(code)}` marker naming `grantId`; a later caller gets `replayed` with that grant id so the
 * tokens issued from the code can be revoked (§4.1.2, §10.5). `null` when the code was never issued or expired.
 *
 * The marker lives for the access-token lifetime plus the code lifetime: long enough to catch a replay while any
 * access token of the code can still be used; the refresh family is revoked through the grant, so it need not
 * outlive the (much longer) refresh lifetime.
 *
 * @example
 * const redemption = await redeemCode(context, code, randomUUID());
 * if (redemption?.kind === 'redeemed') issueTokens(redemption.record);
 */
export async function redeemCode(context: SentinelContext, code: string, grantId: string): Promise<CodeRedemption | null> {
  const stored = await context.store.take(codeKey(code));
  if (stored === null) {
    const previous = await context.store.get(usedCodeKey(code));
    return previous === null ? null : { kind: 'replayed', grantId: previous };
  }
  const { accessTokenTtl, codeTtl } = context.config;
  await context.store.set(usedCodeKey(code), grantId, (accessTokenTtl + codeTtl) * 1000);
  return { kind: 'redeemed', record: JSON.parse(stored) as CodeRecord };
}
