/**
 * The heartbeat of the change listener's connection. A connection that a NAT or a load balancer drops without a FIN
 * or an RST looks open to the driver: no 'error', no 'end', and no notification ever again. Only a query that gets no
 * answer tells it apart from a quiet registry, so the listener sends one every few seconds.
 */
import type { Client } from 'pg';

/** How often the listening connection is checked, in milliseconds. */
export const HEARTBEAT_INTERVAL_MS = 5000;

/** How long a check may wait for its answer before the connection counts as dead, in milliseconds. */
export const HEARTBEAT_TIMEOUT_MS = 2000;

/**
 * Sends `SELECT 1` on `client` every {@link HEARTBEAT_INTERVAL_MS}; calls `dead` once, the first time one fails or
 * gets no answer within {@link HEARTBEAT_TIMEOUT_MS}, and stops. The timers are unref'd (they never keep the host's
 * process alive); the returned function stops them.
 *
 * @example const stop = startHeartbeat(client, () => markLost()); // … later: stop();
 */
export function startHeartbeat(client: Client, dead: () => void): () => void {
  let stopped = false;
  let waiting: ReturnType<typeof setTimeout> | undefined;
  const stop = (): void => {
    stopped = true;
    clearInterval(interval);
    clearTimeout(waiting);
  };
  const fail = (): void => {
    if (stopped) return;
    stop();
    dead();
  };
  const beat = (): void => {
    // One check at a time: a second query would only queue behind an unanswered one.
    if (stopped || waiting !== undefined) return;
    waiting = setTimeout(fail, HEARTBEAT_TIMEOUT_MS);
    waiting.unref();
    client.query('SELECT 1').then(() => {
      clearTimeout(waiting);
      waiting = undefined;
    }, fail);
  };
  const interval = setInterval(beat, HEARTBEAT_INTERVAL_MS);
  interval.unref();
  return stop;
}
