/**
 * Taking back a commit whose grant could not join its user's session index because the store failed. The swap that
 * spends a code (or a device authorization) and writes its grant lands first, and only then is the grant listed in
 * the index, in a write of its own: listing it before the swap would let a logout between the two leave a live grant
 * for an ended session. When that second write fails (Redis out of memory under `noeviction`, a timeout, a dropped
 * connection), the client gets `500 server_error`, which the guides promise can simply be retried: so the grant goes
 * and the credential comes back, in one swap (the two keys share a hash tag), and the retry redeems it afresh.
 *
 * A session that ended is not a store failure: its grant is revoked and the credential stays spent (callers).
 */
import type { SentinelContext } from '../http/context.js';
import { grantKey, revokeGrant } from './grant-records.js';

/** What a commit's swap did, so that it can be taken back. */
export interface CommittedGrant {
  grantId: string;
  /** The grant's value exactly as the swap wrote it: the undo applies only while nothing has changed it since. */
  written: string;
  /** The spent credential's key, its value now (`null`: deleted), and the value and lifetime it had before. */
  credential: { key: string; now: string | null; before: string; ttlMs: number };
}

/**
 * Puts the credential back and deletes the grant, then throws `cause` (a 500 the client may retry). When the grant
 * or the credential changed since the commit (a replay after the retry grace revoked the grant, say), nothing is put
 * back and the grant is revoked, as before this undo existed. When the undo itself fails, the grant is revoked if
 * the store allows and both failures are thrown together, for `onError`: the credential is then lost, and the
 * client must start a new authorization (its retry gets `invalid_grant`); no token of the grant was ever sent.
 *
 * @example
 * try { attached = await attachGrant(context, input); } catch (error) { return undoCommit(context, committed, error); }
 */
export async function undoCommit(context: SentinelContext, committed: CommittedGrant, cause: unknown): Promise<never> {
  const { grantId, written, credential } = committed;
  let undone: boolean;
  try {
    undone = await context.store.swap([
      { key: grantKey(grantId), expect: written, value: null },
      { key: credential.key, expect: credential.now, value: credential.before, ttlMs: credential.ttlMs },
    ]);
  } catch (undoError) {
    // The grant must not stay alive where ending the session would miss it; if even this fails, no token of it was
    // sent, so no one holds one.
    await revokeGrant(context, grantId).catch(() => undefined);
    throw new AggregateError(
      [cause, undoError],
      'the session index could not be written, and the spent credential could not be put back: it is lost',
    );
  }
  if (!undone) await revokeGrant(context, grantId).catch(() => undefined);
  throw cause;
}
