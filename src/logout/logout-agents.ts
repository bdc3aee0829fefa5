/**
 * Kept-alive connections for back-channel logout deliveries, each pinned to an address the guard checked: one
 * node:http(s) `Agent` per (origin, checked address), so a busy app's deliveries reuse a few connections instead of
 * opening one per attempt (a TCP, and for https a TLS, handshake each).
 *
 * - The guard still runs at every attempt (post-logout-token.ts): this pool is asked only for the address that
 *   attempt checked, and an agent connects nowhere else (its `lookup` answers that address alone). A name that
 *   resolves somewhere new gets a new agent; the old one's idle sockets close after {@link AGENT_IDLE_MS}.
 * - TLS is the URL's: the request keeps the host name, so SNI and the certificate check are those of the name, not
 *   of the address connected to.
 * - Bounded: at most `maxSockets` connections per agent and {@link MOST_AGENTS} agents; the least
 *   recently used agent beyond that is retired (its idle sockets closed, the busy ones closed when their answer is in).
 *   An agent whose connections are all busy is not queued behind: the attempt gets a connection of its own, so apps
 *   that share a host never wait on one another's slow answers within the 5 s deadline.
 * - Idle sockets are unref'd by node (they never keep a process alive) and `close()` destroys them all.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';

/** An address the guard checked, as `resolveLogoutTarget` returns it. */
export interface CheckedAddress {
  address: string;
  family: number;
}

/** Connections one agent keeps to one (origin, address) unless told: the loop passes an app's share of its slots. */
export const AGENT_MAX_SOCKETS = 8;
/**
 * How long an idle connection is kept, in milliseconds: under node's own server keep-alive timeout (5 s), so the
 * service rarely reuses a connection the app is closing. A server's `Keep-Alive: timeout=` hint shortens it.
 */
export const AGENT_IDLE_MS = 4000;
/** Agents kept at once (distinct origins and addresses delivered to recently). */
export const MOST_AGENTS = 64;

/**
 * A connect-time lookup that answers `pinned` whatever the name: the connection goes where the guard looked.
 *
 * @example request(url, { lookup: pinnedLookup({ address: '203.0.113.7', family: 4 }), agent: false });
 */
export function pinnedLookup(pinned: CheckedAddress): LookupFunction {
  return (_host, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all === true) {
      (callback as unknown as (error: null, addresses: CheckedAddress[]) => void)(null, [pinned]);
    } else {
      callback(null, pinned.address, pinned.family);
    }
  };
}

/**
 * The agents of one delivery loop.
 *
 * @example
 * const agents = new LogoutAgents();
 * const agent = agents.agentFor(new URL('https://app.example.com/logout'), { address: '203.0.113.7', family: 4 });
 * // request(url, { agent: agent ?? false, lookup: agent === undefined ? pinnedLookup(checked) : undefined, … })
 * agents.close(); // on shutdown
 */
export class LogoutAgents {
  /** By `origin address`, least recently used first (a Map keeps insertion order; a use moves the key last). */
  readonly #agents = new Map<string, HttpAgent>();
  readonly #maxSockets: number;
  readonly #idleMs: number;
  #closed = false;

  /**
   * `maxSockets`: connections per agent, {@link AGENT_MAX_SOCKETS} unless told (the loop gives an app's share of its
   * slots, so one app's deliveries never need a connection of their own); `idleMs`: how long an idle connection is
   * kept, {@link AGENT_IDLE_MS} unless told.
   */
  constructor(options: { maxSockets?: number; idleMs?: number } = {}) {
    this.#maxSockets = options.maxSockets ?? AGENT_MAX_SOCKETS;
    this.#idleMs = options.idleMs ?? AGENT_IDLE_MS;
  }

  /**
   * The agent for `target`'s origin at `checked`, made on first use; `undefined` when all its connections are busy
   * or the pool is closed (the attempt then connects on its own, pinned the same way).
   */
  agentFor(target: URL, checked: CheckedAddress): HttpAgent | undefined {
    if (this.#closed) return undefined;
    const key = `${target.origin} ${checked.address}`;
    let agent = this.#agents.get(key);
    if (agent !== undefined) {
      this.#agents.delete(key);
    } else {
      const options = {
        keepAlive: true,
        maxSockets: this.#maxSockets,
        maxFreeSockets: this.#maxSockets,
        timeout: this.#idleMs,
        // The most recently used connection first: the others stay idle and time out when the load falls.
        scheduling: 'lifo' as const,
        // Agent options override the request's: every connection of this agent goes to the checked address.
        lookup: pinnedLookup(checked),
      };
      agent = target.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
    }
    this.#agents.set(key, agent);
    if (this.#agents.size > MOST_AGENTS) {
      const [oldestKey, oldest] = this.#agents.entries().next().value as [string, HttpAgent];
      this.#agents.delete(oldestKey);
      retire(oldest);
    }
    return busy(agent) >= this.#maxSockets ? undefined : agent;
  }

  /** Closes every connection, idle or not (deliveries in flight are being cut off by then), and refuses new agents. */
  close(): void {
    this.#closed = true;
    for (const agent of this.#agents.values()) agent.destroy();
    this.#agents.clear();
  }
}

/** Connections of `agent` in use, plus requests waiting for one. */
function busy(agent: HttpAgent): number {
  let count = 0;
  for (const sockets of Object.values(agent.sockets)) count += sockets?.length ?? 0;
  for (const requests of Object.values(agent.requests)) count += requests?.length ?? 0;
  return count;
}

/** Lets `agent` go without cutting off answers under way: idle connections now, busy ones as they come free. */
function retire(agent: HttpAgent): void {
  agent.keepSocketAlive = () => false;
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
}
