/**
 * The session index: per user, the device sessions and the grants issued through each (OpenID Connect Back-Channel
 * Logout needs both: which apps to tell when a session ends, and which grants to end with it).
 *
 * One record per user, `user-sessions:{u}` (`u` a digest of account and user), changed only by a one-key `swap`
 * expecting the value read; within one process, by one write at a time that carries every change queued behind the
 * one before (index-group-commit.ts), so a user's concurrent exchanges no longer compete for the record. That record
 * is the one place where "is this session still on?" is decided: a grant is attached only while its session's entry
 * is there, and ending a session removes the entry only after every grant it lists is gone. So a code redeemed
 * while its session ends either attaches first (and is ended with it) or finds the entry gone (and is revoked at
 * once): no interleaving lets a token of an ended session live. Any Store works: the index needs no method beyond
 * `get` and `swap`.
 *
 * Stored form: index-encoding.ts. The `sid` and the user part of the key: sid.ts. Adding a session, and what it
 * carries of the earlier sign-ins of its browser: carry-over.ts.
 */
import type { AppStore } from '../apps/app.js';
import type { ResolvedConfig } from '../config.js';
import type { SentinelContext } from '../http/context.js';
import { untraced } from '../telemetry/traced-store.js';
import { grantKey } from '../token/grant-records.js';
import { grantsOnly, listedAt, withoutMarkerOf } from './app-marker.js';
import { boundAppsPerSession, boundGrantsPerApp } from './grant-bound.js';
import { changeIndexTogether, type IndexChange } from './index-group-commit.js';
import { encodeIndex, type IndexedGrant, type IndexedSession, parseIndex } from './index-encoding.js';
import { parseSid, userPart } from './sid.js';

export type { IndexedGrant, IndexedSession } from './index-encoding.js';
export { parseSid, sessionSid, userPart } from './sid.js';

/**
 * What the session functions need of the service: the store, where logout deliveries wait, and the audit emitter.
 * `apps`, when given, limits the deliveries to apps with a `backchannelLogoutUri`; the CLI has no registry and
 * queues one per app, which the delivery loops drop for apps that take none. `config` says whether an https client
 * id names a metadata document (the service's; the CLI has none, so it queues https ids too, and the delivery loops
 * drop those that name one).
 */
export type SessionContext = Pick<SentinelContext, 'store' | 'logoutQueue' | 'emit'> & {
  apps?: AppStore | undefined;
  config?: Pick<ResolvedConfig, 'clientIdMetadataDocuments'> | undefined;
};

/** A user's index as read, with the exact text a later swap must expect. */
export interface UserIndex {
  key: string;
  raw: string | null;
  accountId: string;
  userId: string;
  sessions: IndexedSession[];
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** The store key of a user's index. */
export function userIndexKey(accountId: string, userId: string): string {
  return indexKeyOfPart(userPart(accountId, userId));
}

function indexKeyOfPart(part: string): string {
  return `user-sessions:${part}`;
}

/** The end of an entry: when neither its session nor any of its grants can live any more. */
function entryEnd(session: IndexedSession): number {
  let end = session.sessionEnd;
  for (const grant of session.grants) end = Math.max(end, grant.until);
  return end;
}

/**
 * Drops what can no longer live: whole entries past their end, and expired grants of the entries kept (an app's
 * last one leaves a marker while its session lives: app-marker.ts). Nothing is
 * copied when nothing expired (the common case: every exchange and sign-in reads and writes the index once each), so
 * the result may be `sessions` itself; no caller changes the arrays it is given.
 */
function pruned(sessions: IndexedSession[], now: number): IndexedSession[] {
  let kept: IndexedSession[] | undefined;
  for (let i = 0; i < sessions.length; i++) {
    const session = sessions[i] as IndexedSession;
    let live: IndexedSession | undefined = session;
    if (entryEnd(session) <= now) live = undefined;
    else {
      const grants = listedAt(session, now);
      if (grants !== session.grants) live = { ...session, grants };
    }
    if (live !== session && kept === undefined) kept = sessions.slice(0, i);
    if (live !== undefined) kept?.push(live);
  }
  return kept ?? sessions;
}

/**
 * The index under `key` as `accountId` sees it, or `null` when there is none or it is another account's: a record of
 * the earlier form names its account; one of the current form belongs to `accountId` when its key is the digest of
 * `accountId` and its user.
 */
async function readByKey(context: SessionContext, key: string, accountId: string): Promise<UserIndex | null> {
  const raw = await context.store.get(key);
  if (raw === null) return null;
  const stored = parseIndex(raw);
  const ours = stored.accountId === undefined ? key === userIndexKey(accountId, stored.userId) : stored.accountId === accountId;
  if (!ours) return null;
  return { key, raw, accountId, userId: stored.userId, sessions: pruned(stored.sessions, nowSeconds()) };
}

/**
 * A user's index (expired entries left out), or an empty one to build on.
 *
 * @example const index = await readUserIndex(context, '123456', 'u-1');
 */
export async function readUserIndex(
  context: SessionContext,
  accountId: string,
  userId: string,
  key: string = userIndexKey(accountId, userId),
): Promise<UserIndex> {
  const raw = await context.store.get(key);
  if (raw === null) return { key, raw: null, accountId, userId, sessions: [] };
  const stored = parseIndex(raw);
  if ((stored.accountId !== undefined && stored.accountId !== accountId) || stored.userId !== userId) {
    throw new Error('the stored session index belongs to another user');
  }
  return { key, raw, accountId, userId, sessions: pruned(stored.sessions, nowSeconds()) };
}

/**
 * The index a sid points into, or `null` when the sid is not one of ours or its user has nothing indexed in the
 * account.
 *
 * @example const index = await readIndexOfSid(context, accountId, sid);
 */
export async function readIndexOfSid(context: SessionContext, accountId: string, sid: string): Promise<UserIndex | null> {
  const parts = parseSid(sid);
  if (parts === null) return null;
  return readByKey(context, indexKeyOfPart(parts.userPart), accountId);
}

/**
 * Writes `next` in place of what `index` was read as; `false` when the record changed since (then re-read). An
 * index left empty is deleted.
 */
export async function writeUserIndex(context: SessionContext, index: UserIndex, sessions: IndexedSession[]): Promise<boolean> {
  const now = nowSeconds();
  const kept = pruned(sessions, now);
  if (kept.length === 0) {
    return index.raw === null ? true : context.store.swap([{ key: index.key, expect: index.raw, value: null }]);
  }
  let end = 0;
  for (const session of kept) end = Math.max(end, entryEnd(session));
  const value = encodeIndex(index.userId, kept);
  return context.store.swap([{ key: index.key, expect: index.raw, value, ttlMs: Math.max(1, end - now) * 1000 }]);
}

/**
 * Applies `change` to a user's index, in this process's next write of the record (index-group-commit.ts), and
 * resolves its answer. Every write of an index goes through here: the changes of one user queued in a process are
 * planned one after another and written together by one compare-and-set, which is retried (every change planned
 * again) when another instance wrote the record first.
 *
 * @example const ended = await commitIndexChange(context, accountId, userId, (sessions) => ({ sessions: sessions.slice(1), settle: () => true }));
 */
export function commitIndexChange<T>(
  context: SessionContext,
  accountId: string,
  userId: string,
  change: IndexChange<IndexedSession[], T>,
  key: string = userIndexKey(accountId, userId),
): Promise<T> {
  // The key is a digest of account and user: computed once per change, not again for every read of a retry.
  const read = async () => {
    const index = await readUserIndex(context, accountId, userId, key);
    return { sessions: index.sessions, write: (sessions: IndexedSession[]) => writeUserIndex(context, index, sessions) };
  };
  // The store behind any tracing proxy: one request's traced view and another's are the same instance's store.
  return changeIndexTogether(untraced(context.store), key, read, change);
}

/**
 * Applies `change` to a user's index as one compare-and-set (see {@link commitIndexChange}). `change` returns the new
 * entries, or `null` to leave the record as it is (its answer is then `false`).
 */
export function changeUserIndex(
  context: SessionContext,
  accountId: string,
  userId: string,
  change: (sessions: IndexedSession[]) => IndexedSession[] | null,
): Promise<boolean> {
  return commitIndexChange(context, accountId, userId, (sessions) => {
    const next = change(sessions);
    return next === null ? { sessions, settle: () => false } : { sessions: next, settle: () => true };
  });
}

/** What {@link attachGrant} is told: the grant, the session it was issued through, and the bound it must keep. */
export interface AttachedGrant {
  accountId: string;
  userId: string;
  sid: string;
  clientId: string;
  grantId: string;
  /** Seconds since the epoch after which no token of the grant can be used. */
  until: number;
  /** `session.maxGrantsPerApp`: the most grants of `clientId` the session keeps; the oldest beyond it are ended. */
  maxGrantsPerApp: number;
  /** `session.maxAppsPerSession`: the most apps the session keeps grants of; the least recently used are ended. */
  maxAppsPerSession: number;
}

/**
 * Records that a grant was issued through the session `sid`. Resolves `false` when that session is no longer
 * indexed (it ended, or the sid is not this user's): the caller must then end the grant, because nothing would end
 * it with its session. This is what keeps a code redeemed while its session ends from outliving it.
 *
 * The session keeps at most `maxGrantsPerApp` grants of the app, and grants of at most `maxAppsPerSession` apps
 * (grant-bound.ts). The oldest grants of the app beyond the first, and every grant of the apps used least recently
 * beyond the second, are ended — deleted as any revoked grant is, so their refresh tokens answer `invalid_grant` and
 * the guard refuses their access tokens — before the write that drops them from the index: no grant the index stops
 * listing is still alive. A compare-and-set lost to another write re-reads and may pick grants already ended (by
 * this call: skipped; by a concurrent one: deleted again, harmless). The write that drops a grant reports it, one
 * `grant.ended` event per grant however many exchanges raced to end it. It rejects when ending one fails, and then the new grant is not
 * listed either: the caller must end it (fail closed).
 *
 * Attaches of one user in one process do not compete for the record: those that arrive while a write of it is in
 * flight are written together by the next one ({@link commitIndexChange}), each planned as if it came right after
 * the one before it, and each answered for itself. So a later one of a batch may end a grant an earlier one added,
 * exactly as it would a moment later; an attach whose ending failed is rejected alone, and the rest of its batch
 * is written without it.
 *
 * Exported for every grant that starts in a signed-in browser (the code grant; a device or exchange flow that
 * approves in a session can call it too).
 *
 * @example if (!(await attachGrant(context, { accountId, userId, sid, clientId, grantId, until, maxGrantsPerApp: 16, maxAppsPerSession: 64 }))) await revokeGrant(context, grantId);
 */
export async function attachGrant(context: SessionContext, input: AttachedGrant): Promise<boolean> {
  const parts = parseSid(input.sid);
  // The sid's user part is checked against the user's own, and then names the index (one digest per exchange).
  if (parts === null || parts.userPart !== userPart(input.accountId, input.userId)) return false;
  const grant: IndexedGrant = { clientId: input.clientId, grantId: input.grantId, until: input.until };
  // Kept across the attempts of this attach's batch, so a grant it already deleted is not deleted again.
  const ended = new Set<string>();
  return commitIndexChange(
    context,
    input.accountId,
    input.userId,
    (sessions) => {
      const at = sessions.findIndex((session) => session.sessionDigest === parts.sessionDigest);
      const session = sessions[at];
      if (session === undefined) return { sessions, settle: () => false };
      // The app's marker, if its earlier grants expired, gives way to the grant that names the app again.
      const perApp = boundGrantsPerApp(withoutMarkerOf(session.grants, input.clientId), grant, input.maxGrantsPerApp);
      const perSession = boundAppsPerSession(perApp.kept, input.clientId, input.maxAppsPerSession);
      // An earlier sign-in a later one carries (carry-over.ts) is listed as long as its carrier once it has a grant.
      const carrier = sessions.find((other) => other.carried?.includes(session.sessionDigest) === true);
      const sessionEnd = carrier === undefined ? session.sessionEnd : Math.max(session.sessionEnd, carrier.sessionEnd);
      const next = [...sessions];
      next[at] = { ...session, sessionEnd, grants: perSession.kept };
      // A dropped app's marker has nothing to end, and no event.
      const endings = [
        ...perApp.ended.map((old) => ({ old, reason: 'session-app-limit' as const })),
        ...grantsOnly(perSession.ended).map((old) => ({ old, reason: 'session-apps-limit' as const })),
      ];
      // Deleting the grant record is the whole revocation (grant-records.ts `revokeGrant`): every token of the grant
      // is accepted only while the record exists. All of them before the write that drops them.
      const endOldest = async (): Promise<void> => {
        const fresh = endings.map(({ old }) => old).filter((old) => !ended.has(old.grantId));
        await Promise.all(fresh.map((old) => context.store.delete(grantKey(old.grantId))));
        for (const old of fresh) ended.add(old.grantId);
      };
      const settle = (): boolean => {
        // The oldest grants are deleted and the index written: committed, so a throwing onEvent cannot fail (and
        // undo) the new grant after the old ones are gone.
        for (const { old, reason } of endings) {
          context.emit(
            { type: 'grant.ended', accountId: input.accountId, clientId: old.clientId, userId: input.userId, reason },
            'committed',
          );
        }
        return true;
      };
      return { sessions: next, prepare: endings.length === 0 ? undefined : endOldest, settle };
    },
    indexKeyOfPart(parts.userPart),
  );
}

/** The distinct client ids of a session's grants and markers, in the order they first got tokens through it. */
export function clientIdsOf(session: IndexedSession): string[] {
  return [...new Set(session.grants.map((grant) => grant.clientId))];
}
