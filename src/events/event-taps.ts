/**
 * In-process listeners of a service's audit events besides the host's `onEvent`: the operator console keeps this
 * instance's recent events in a bounded buffer through one, so its audit page works without the host wiring
 * anything. Keyed by the resolved configuration (one per service), so the hot path pays a WeakMap lookup only.
 */
import type { SentinelEvent } from './sentinel-event.js';

/** A listener of finished events; it must not throw (a throw is swallowed, it never fails a request). */
export type EventTap = (event: SentinelEvent) => void;

const TAPS = new WeakMap<object, Set<EventTap>>();

/**
 * Adds `tap` to the events of the service whose resolved configuration is `config`; returns the function that
 * removes it.
 *
 * @example const untap = tapEvents(sentinel.config, (event) => buffer.push(event));
 */
export function tapEvents(config: object, tap: EventTap): () => void {
  let taps = TAPS.get(config);
  if (taps === undefined) {
    taps = new Set();
    TAPS.set(config, taps);
  }
  taps.add(tap);
  const held = taps;
  return () => {
    held.delete(tap);
    if (held.size === 0) TAPS.delete(config);
  };
}

/** The taps of a service, or `undefined` when it has none. */
export function eventTaps(config: object): ReadonlySet<EventTap> | undefined {
  return TAPS.get(config);
}
