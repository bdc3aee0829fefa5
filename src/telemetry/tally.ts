/**
 * Counts kept by the service and reported through an observable counter at each collection, instead of a synchronous
 * counter's `add()` on every request: the SDK hashes the attribute set of every `add()` (sorting its keys and
 * serialising it to JSON), while a tally whose attribute sets are shared objects counts with one map lookup by
 * identity. The exported metric is the same monotonic sum, with the same name and attributes.
 */
import type { Attributes, ObservableResult } from '@opentelemetry/api';

/** As the SDK's default cardinality limit: past it, new attribute sets are counted under the overflow set. */
const CARDINALITY_LIMIT = 2000;
const OVERFLOW: Attributes = Object.freeze({ 'otel.metric.overflow': true });

/** The counts of one counter, by attribute set. */
export class Tally {
  readonly #counts = new Map<Attributes, number>();
  readonly #interned = new Map<string, Attributes>();

  constructor(private readonly counting: boolean) {}

  /**
   * Counts one for `attributes`, which must be the same object every time for the same set (a frozen, shared one).
   * @example tally.add(requestAttributes('token', 200));
   */
  add(attributes: Attributes): void {
    if (!this.counting) return;
    const count = this.#counts.get(attributes);
    if (count !== undefined) {
      this.#counts.set(attributes, count + 1);
      return;
    }
    const counted = this.#counts.size < CARDINALITY_LIMIT ? attributes : OVERFLOW;
    this.#counts.set(counted, (this.#counts.get(counted) ?? 0) + 1);
  }

  /**
   * Counts one for an attribute set built per call (ids in metrics), interned under `key`: its values, serialised
   * unambiguously (ids are caller-chosen text).
   * @example tally.addKeyed(JSON.stringify([route, status, accountId]), () => ({ 'sentinel.route': route, … }));
   */
  addKeyed(key: string, build: () => Attributes): void {
    if (!this.counting) return;
    let attributes = this.#interned.get(key);
    if (attributes === undefined) {
      attributes = this.#interned.size < CARDINALITY_LIMIT ? Object.freeze(build()) : OVERFLOW;
      if (attributes !== OVERFLOW) this.#interned.set(key, attributes);
    }
    this.add(attributes);
  }

  /** Reports every count (the observable counter's callback). */
  observe(result: ObservableResult): void {
    for (const [attributes, count] of this.#counts) result.observe(count, attributes);
  }
}
