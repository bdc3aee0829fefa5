/**
 * A binary min-heap of due times: the earliest first, and of equal due times the one pushed first. A job queue keeps
 * one to hand out its earliest due jobs without scanning every job it holds (a backlog of thousands would otherwise
 * be read once per claim). Entries are never updated in place: a job whose due time changes is pushed again, and its
 * queue skips the entries that no longer match (lazy deletion).
 */

/** One entry: which job, and the due time it was pushed with. */
export interface DueEntry {
  id: string;
  dueAt: number;
  /** Push order, the tie-break among equal due times. */
  seq: number;
}

/**
 * @example
 * const heap = new DueHeap();
 * heap.push('a', 20);
 * heap.push('b', 10);
 * heap.pop()?.id; // 'b'
 */
export class DueHeap {
  #entries: DueEntry[] = [];
  #seq = 0;

  get size(): number {
    return this.#entries.length;
  }

  /** The earliest entry without removing it. */
  peek(): DueEntry | undefined {
    return this.#entries[0];
  }

  push(id: string, dueAt: number): void {
    this.#entries.push({ id, dueAt, seq: this.#seq++ });
    this.#up(this.#entries.length - 1);
  }

  /** Removes and returns the earliest entry. */
  pop(): DueEntry | undefined {
    const entries = this.#entries;
    const top = entries[0];
    const last = entries.pop();
    if (top !== undefined && last !== undefined && entries.length > 0) {
      entries[0] = last;
      this.#down(0);
    }
    return top;
  }

  /** Drops every entry `keep` refuses (entries that no longer match their job), keeping the others' order. */
  retain(keep: (entry: DueEntry) => boolean): void {
    this.#entries = this.#entries.filter(keep);
    for (let i = (this.#entries.length >> 1) - 1; i >= 0; i--) this.#down(i);
  }

  #before(a: DueEntry, b: DueEntry): boolean {
    return a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.seq < b.seq);
  }

  #up(at: number): void {
    const entries = this.#entries;
    const entry = entries[at] as DueEntry;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const above = entries[parent] as DueEntry;
      if (!this.#before(entry, above)) break;
      entries[at] = above;
      at = parent;
    }
    entries[at] = entry;
  }

  #down(at: number): void {
    const entries = this.#entries;
    const entry = entries[at] as DueEntry;
    const half = entries.length >> 1;
    while (at < half) {
      let child = 2 * at + 1;
      const right = child + 1;
      if (right < entries.length && this.#before(entries[right] as DueEntry, entries[child] as DueEntry)) child = right;
      const below = entries[child] as DueEntry;
      if (!this.#before(below, entry)) break;
      entries[at] = below;
      at = child;
    }
    entries[at] = entry;
  }
}
