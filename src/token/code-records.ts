/**
 * Authorization codes (RFC 6749 §4.1.2, §10.5): 256 random bits, stored under a key derived from their SHA-256
 * digest with everything the token endpoint must check; single use through the Store's atomic `swap`, which spends
 * the code and creates its grant in one step (`token/authorization-code-grant.ts`).
 *
 * This file is the contract between the authorize side (which issues codes) and the token endpoint (which redeems
 * them).
 */
import type { SentinelContext } from '../http/context.js';
import { digest, randomSecret } from '../lib/random-secrets.js';
import { type CodeRecord, decodeCodeRecord, encodeCodeRecord } from './code-encoding.js';

export type { CodeRecord } from './code-encoding.js';

/**
 * The id of the grant a code turns into: derived from the code by a one-way hash, so that the code's key and its
 * grant's key share a hash tag (one Redis Cluster slot, one atomic redemption script), and so that a second
 * presentation of the code finds the grant it created (replay detection needs no marker of its own). The id is
 * public (access tokens carry it as `gid`); the code cannot be recovered from it.
 */
export function grantIdForCode(code: string): string {
  return digest(`grant-id:${code}`).slice(0, 22);
}

/** The store key of a code: `code:{gid}`, beside its future grant's `grant:{gid}`. */
export function codeKey(code: string): string {
  return codeKeyOf(grantIdForCode(code));
}

/**
 * The store key of a code whose grant id is already known: the token endpoint derives the id once per redemption
 * instead of hashing the code again for every key.
 *
 * @example
 * const key = codeKeyOf(grantIdForCode(code)); // 'code:{…}', the same as codeKey(code)
 */
export function codeKeyOf(grantId: string): string {
  return `code:{${grantId}}`;
}

/**
 * Issues a code for `record`; returns the plain code (to put in the redirect, never to log). `ttlSeconds` shortens
 * its life below `codeTtl` (a FAPI 2.0 app's codes live at most 60 s). The caller builds the record as one object
 * literal, `issuedAt` included (members left `undefined` are not stored): every signed-in authorize request issues a
 * code, and copying the record with spreads cost twice the serialisation itself.
 *
 * The events come once the code is written, so a code that could not be written is never announced: first
 * `announce` (a sign-in's `session.created`, whose session is only kept with its code; a silent sign-in's check that
 * its session still stands), then `code.issued`. When `announce` throws or an `onEvent` vetoes, the code is deleted
 * again: it is never sent, and no record stays behind for it.
 *
 * @example
 * const code = await issueCode(context, { accountId, clientId, redirectUri, redirectUriInRequest, userId, authTime, issuedAt });
 */
export async function issueCode(
  context: SentinelContext,
  record: CodeRecord,
  ttlSeconds: number = context.config.codeTtl,
  announce?: () => void | Promise<void>,
): Promise<string> {
  const code = randomSecret();
  const key = codeKey(code);
  await context.store.set(key, encodeCodeRecord(record), Math.min(ttlSeconds, context.config.codeTtl) * 1000);
  try {
    await announce?.();
    context.emit({ type: 'code.issued', accountId: record.accountId, clientId: record.clientId, userId: record.userId });
  } catch (error) {
    // The veto's error is the answer; a failing delete leaves a code nobody holds, which expires unused.
    await context.store.delete(key).catch(() => undefined);
    throw error;
  }
  return code;
}

/**
 * The record of a code as stored by {@link issueCode} (either form of code-encoding.ts); `null` when the value is not
 * one (a corrupt store entry), which the token endpoint refuses to redeem.
 * @example const record = parseCodeRecord(await context.store.get(codeKey(code)));
 */
export function parseCodeRecord(stored: string | null): CodeRecord | null {
  return decodeCodeRecord(stored);
}
