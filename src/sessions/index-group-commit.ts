/**
 * Group commit of a user's session index within one process: one read-modify-write of the record at a time, and
 * every change that arrives while it is in flight is applied with the others in the next one.
 *
 * Why: the index is one record per user, and every code exchange, sign-in and ending of the user's sessions rewrites
 * it with a compare-and-set. Fifty exchanges of one user at once each read it, all but one lost the compare-and-set,
 * re-read and lost again until their attempts ran out (500s; bench/RESULTS.md, "flow-exchange-sentinel-redis").
 * Retrying cannot lift that: one record serialises its writers. Here the writers of one process queue instead, and
 * the next write carries all of them, so their number no longer matters, only the round trips of one write.
 *
 * The compare-and-set stays: other instances write the same record. A batch that loses to one of them reads again,
 * plans every change of the batch again and retries, pausing a random moment first, as one change did before.
 *
 * Each change is planned in turn against the sessions the changes before it left, so what the batch writes is what
 * writing them one after another would have left, and each caller gets its own answer. The store work a change needs
 * done before the write (ending the grants it drops) runs before the write; when it fails, that caller is rejected
 * and the rest of the batch is planned again without it: nothing of a failed change is written.
 */

/**
 * What one change makes of the index, planned against the sessions (`S`: session-index.ts `IndexedSession[]`) the
 * changes queued before it left. Generic only so that this module needs nothing of the index's format.
 */
export interface PlannedChange<S, T> {
  /** The sessions after this change: the very value it was given when it changes nothing. */
  sessions: S;
  /** Store work that must be done before the write recording `sessions` (ending the grants it stops listing). */
  prepare?: (() => Promise<void>) | undefined;
  /** Called once the write landed, or none was needed: the caller's answer; events are emitted here. It may throw. */
  settle: () => T;
}

/**
 * One caller's change of a user's index. Pure apart from what it keeps for itself across attempts (which grants it
 * already ended): it may be planned several times, once per attempt of its batch, and only the last plan counts.
 */
export type IndexChange<S, T> = (sessions: S) => PlannedChange<S, T>;

/** One read of the record (session-index.ts `readUserIndex`): its sessions, and how to write others in its place. */
export interface IndexRead<S> {
  sessions: S;
  /** Compare-and-set against what was read (session-index.ts `writeUserIndex`): `false` when it changed since. */
  write(sessions: S): Promise<boolean>;
}

interface Waiting {
  read: () => Promise<IndexRead<unknown>>;
  change: IndexChange<unknown, unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** How often a batch re-reads a record that another instance changed under it before it gives up (a 500). */
const ATTEMPTS = 16;
/** The longest pause, in milliseconds, before a batch that lost its compare-and-set reads the record again. */
const LOST_WRITE_PAUSE_MAX_MS = 128;

/**
 * Per store object (one instance of the service), per record key: the changes waiting behind the batch in flight.
 * A key is present only while a batch of it runs; a WeakMap, so a store that is dropped takes its queues with it.
 */
const queues = new WeakMap<object, Map<string, Waiting[]>>();

/**
 * Applies `change` to the record `key` of `store`, together with the changes of the same record queued in this
 * process, and resolves what its `settle` answers (or rejects with what failed its batch or its own `prepare`).
 * `store` only identifies the instance: stores of two instances each keep their own queue and meet at the
 * compare-and-set.
 *
 * @example
 * const read = async () => {
 *   const index = await readUserIndex(context, accountId, userId);
 *   return { sessions: index.sessions, write: (next) => writeUserIndex(context, index, next) };
 * };
 * const added = await changeIndexTogether(store, userIndexKey(accountId, userId), read, (sessions) => ({
 *   sessions: [...sessions, entry],
 *   settle: () => true,
 * }));
 */
export function changeIndexTogether<S, T>(
  store: object,
  key: string,
  read: () => Promise<IndexRead<S>>,
  change: IndexChange<S, T>,
): Promise<T> {
  let byKey = queues.get(store);
  if (byKey === undefined) {
    byKey = new Map();
    queues.set(store, byKey);
  }
  const records = byKey;
  return new Promise<T>((resolve, reject) => {
    // Every change of one key plans the same kind of sessions; the queue only holds them, so their types are erased.
    const entry = { read, change, resolve, reject } as unknown as Waiting;
    const waiting = records.get(key);
    if (waiting !== undefined) {
      waiting.push(entry);
      return;
    }
    records.set(key, []);
    void drain(records, key, [entry]);
  });
}

/** Commits batches of `key` until nobody waits, then leaves the key idle. Never rejects: failures go to the callers. */
async function drain(records: Map<string, Waiting[]>, key: string, first: Waiting[]): Promise<void> {
  let batch = first;
  while (batch.length > 0) {
    await commit(batch);
    // Taken and the key freed in the same turn as the check, so nothing can join a queue no batch will drain.
    batch = records.get(key)?.splice(0) ?? [];
  }
  records.delete(key);
}

/** One planned attempt of a batch: each member's plan, or the error its planning threw. */
type Planned = { member: Waiting; plan: PlannedChange<unknown, unknown> } | { member: Waiting; error: unknown };

/** Writes one batch: read, plan each change in turn, do their prepared work, compare-and-set; again after a lost write. */
async function commit(batch: Waiting[]): Promise<void> {
  let members = batch;
  let lost = 0;
  try {
    while (members.length > 0) {
      const leader = members[0] as Waiting;
      const index = await leader.read();
      let sessions = index.sessions;
      const planned: Planned[] = [];
      for (const member of members) {
        try {
          const plan = member.change(sessions);
          sessions = plan.sessions;
          planned.push({ member, plan });
        } catch (error) {
          planned.push({ member, error });
        }
      }
      // Most batches have nothing to prepare and no failed plan: no promise then, on every code exchange's path.
      const failed = needsWork(planned) ? await failures(planned) : NONE_FAILED;
      if (failed.size > 0) {
        // Nothing of a failed change may be written (a grant it could not end stays listed): plan the rest again.
        for (const [member, error] of failed) member.reject(error);
        members = members.filter((member) => !failed.has(member));
        continue;
      }
      if (sessions === index.sessions || (await index.write(sessions))) {
        for (const entry of planned) if ('plan' in entry) settle(entry.member, entry.plan);
        return;
      }
      lost++;
      if (lost === ATTEMPTS) throw new Error("the user's session index kept changing");
      await pauseAfterLostWrite(lost - 1);
    }
  } catch (error) {
    // The read or the write failed, or other instances kept winning: no caller of the batch learns of a write.
    for (const member of members) member.reject(error);
  }
}

const NONE_FAILED: ReadonlyMap<Waiting, unknown> = new Map();

/** Whether any plan failed or has work to do before the write. */
function needsWork(planned: Planned[]): boolean {
  for (const entry of planned) if ('error' in entry || entry.plan.prepare !== undefined) return true;
  return false;
}

/** Runs every plan's prepared work at once; the members whose planning or work failed, with why. */
async function failures(planned: Planned[]): Promise<ReadonlyMap<Waiting, unknown>> {
  const failed = new Map<Waiting, unknown>();
  const work: Promise<void>[] = [];
  for (const entry of planned) {
    if ('error' in entry) {
      failed.set(entry.member, entry.error);
    } else if (entry.plan.prepare !== undefined) {
      const { prepare } = entry.plan;
      // Through an async function, so that a prepare throwing before its first await is caught the same way.
      work.push((async () => prepare())().catch((error: unknown) => void failed.set(entry.member, error)));
    }
  }
  await Promise.all(work);
  return failed;
}

function settle(member: Waiting, plan: PlannedChange<unknown, unknown>): void {
  try {
    member.resolve(plan.settle());
  } catch (error) {
    member.reject(error);
  }
}

/**
 * A random pause of up to 1, 2, 4, … (at most {@link LOST_WRITE_PAUSE_MAX_MS}) ms after the `attempt`-th lost write.
 * Instances whose batches raced for one record would otherwise all re-read at once and collide again.
 */
function pauseAfterLostWrite(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(LOST_WRITE_PAUSE_MAX_MS, 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, ms));
}
