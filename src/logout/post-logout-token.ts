/**
 * One delivery attempt of a logout token (OpenID Connect Back-Channel Logout 1.0 §2.5): `POST` form-encoded
 * `logout_token=…` to the app's `backchannelLogoutUri`, defensively, since the address is the app's.
 *
 * - The URI passes the checks of registration at every attempt (https, or http on a loopback host; no userinfo, no
 *   fragment): an app of a host's own AppStore, or a registry row older than the checks, is refused, not posted to
 *   in cleartext.
 * - The target passes the `jwks_uri` address guard at every attempt, and the connection is pinned to the address
 *   checked (no DNS rebinding between check and connect): src/sessions/logout-target.ts. Given the loop's
 *   {@link LogoutAgents}, the connection is a kept-alive one to that same (origin, address), or a new one kept
 *   for the next attempt that checks the same address.
 * - One deadline (5 s) covers DNS, connect and the answer's status line; the body of the answer is never read, only
 *   drained (at most {@link MOST_DRAINED} bytes, within the same deadline) so its connection can carry the next token.
 * - Redirects are not followed (§2.8 wants a 200; a 3xx is the app's mistake, and following it would leave the guard).
 *
 * The outcome says whether a retry may help: timeouts, connection errors, 5xx, 408 and 429 may pass; any other 4xx is
 * the app refusing the token, and a refused address or a redirect stays what it is. A retry marked `starved` never
 * left this process: its lookup got none of the process's outbound lookup slots before the deadline (other lookups,
 * anyone's, held them all), so nothing was asked of the app or its name servers.
 */
import { type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { backchannelLogoutURIProblem } from '../apps/app-validation.js';
import { gotNoLookupSlot, resolveLogoutTarget } from '../sessions/logout-target.js';
import { type CheckedAddress, type LogoutAgents, pinnedLookup } from './logout-agents.js';

/** Longest one attempt may take, in milliseconds (the brief: each POST bounded to at most 5 s). */
export const LOGOUT_POST_TIMEOUT_MS = 5000;
/** Most bytes of an answer's body drained to keep its connection; an app answering more loses the connection. */
export const MOST_DRAINED = 64 * 1024;

/** What one attempt came to; `reason` names what happened, never the token or the app's answer body. */
export type PostOutcome =
  | { kind: 'delivered'; status: number }
  | { kind: 'refused'; status?: number | undefined; reason: string }
  | { kind: 'retry'; status?: number | undefined; reason: string; starved?: true | undefined };

/** Why a starved attempt was not made (see {@link PostOutcome}). */
const STARVED = 'no DNS lookup slot came free in time';

/** How one attempt is made. */
export interface PostOptions {
  allowPrivateAddresses: boolean;
  timeoutMs?: number | undefined;
  /** Cuts the attempt off (the service is closing). */
  signal?: AbortSignal | undefined;
  /** Kept-alive connections to reuse; without them every attempt opens (and closes) its own. */
  agents?: LogoutAgents | undefined;
}

/**
 * Posts `logoutToken` to `uri` once.
 *
 * @example
 * const outcome = await postLogoutToken('https://app.example.com/logout', token, { allowPrivateAddresses: false });
 * if (outcome.kind === 'retry') scheduleAgain();
 */
export async function postLogoutToken(uri: string, logoutToken: string, options: PostOptions): Promise<PostOutcome> {
  // The URI as registration checks it, at every attempt: the app may come from a host's own AppStore or a registry
  // row written before the checks, and a token posted to plain http on a public host travels in cleartext.
  const problem = backchannelLogoutURIProblem(uri);
  if (problem !== null) return { kind: 'refused', reason: `the back-channel logout URI ${problem}` };
  let target: URL;
  try {
    target = new URL(uri);
  } catch {
    return { kind: 'refused', reason: 'the back-channel logout URI is not a URL' };
  }
  const { deadline, release } = attemptDeadline(options.timeoutMs ?? LOGOUT_POST_TIMEOUT_MS, options.signal);
  try {
    return await attempt(uri, target, `logout_token=${encodeURIComponent(logoutToken)}`, options, deadline);
  } finally {
    release();
  }
}

/**
 * The attempt's deadline: its own timeout, or `stopping` (the loop's, which lives as long as the service). Not
 * `AbortSignal.any`: on Node 20 every signal made from it stays listed in each of its sources for good (a weak
 * reference the source never drops, about 50 bytes), so an attempt made from the loop's signal left one behind, and
 * the process grew with every logout it delivered. Here the loop's signal holds one listener per attempt under way,
 * removed by `release` when the attempt is done.
 */
function attemptDeadline(timeoutMs: number, stopping: AbortSignal | undefined): { deadline: AbortSignal; release(): void } {
  const timeout = AbortSignal.timeout(timeoutMs);
  if (stopping === undefined) return { deadline: timeout, release: () => {} };
  const controller = new AbortController();
  const abort = (): void => controller.abort(stopping.aborted ? stopping.reason : timeout.reason);
  if (stopping.aborted) abort();
  else stopping.addEventListener('abort', abort, { once: true });
  timeout.addEventListener('abort', abort, { once: true });
  const release = (): void => {
    stopping.removeEventListener('abort', abort);
    timeout.removeEventListener('abort', abort);
  };
  return { deadline: controller.signal, release };
}

/** One attempt to `uri` (parsed: `target`) within `deadline`: the address guard, the POST of `body`, the outcome. */
async function attempt(uri: string, target: URL, body: string, options: PostOptions, deadline: AbortSignal): Promise<PostOutcome> {
  let checked: CheckedAddress;
  try {
    checked = await abortable(resolveLogoutTarget(uri, options.allowPrivateAddresses, deadline), deadline);
  } catch (error) {
    if (gotNoLookupSlot(error)) return { kind: 'retry', reason: STARVED, starved: true };
    const message = deadline.aborted ? 'the app did not answer in time' : (error as Error).message;
    // A name that does not resolve (yet) may resolve on the next attempt; a refused address will not change.
    return /does not resolve|in time/.test(message) ? { kind: 'retry', reason: message } : { kind: 'refused', reason: message };
  }
  let response: IncomingMessage;
  try {
    response = await send(target, checked, body, deadline, options.agents);
  } catch (error) {
    // A kept-alive connection the app closed as it was reused (its idle timeout ran out before ours): once more,
    // within the same deadline and to the address this attempt checked. The token most likely never got there, and
    // if it did, a second copy is one §2.6 lets the app treat as done.
    if (!deadline.aborted && (error as { reusedSocket?: boolean }).reusedSocket === true) {
      try {
        response = await send(target, checked, body, deadline, options.agents);
      } catch (again) {
        return unanswered(again, deadline);
      }
    } else {
      return unanswered(error, deadline);
    }
  }
  const status = response.statusCode ?? 0;
  // Drained before the outcome: the app's next delivery then finds this connection free instead of opening one.
  await drain(response);
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status >= 300 && status < 400) return { kind: 'refused', status, reason: `the app answered ${status}; redirects are not followed` };
  // 408 and 429 say the app (or a gateway in front of it) is busy, not that it refuses the token: a mass logout is
  // just when an app's rate limit answers 429, and dropping those would leave its users signed in there.
  if (status === 408 || status === 429) return { kind: 'retry', status, reason: `the app answered ${status}` };
  if (status >= 400 && status < 500) return { kind: 'refused', status, reason: `the app answered ${status}` };
  return { kind: 'retry', status, reason: `the app answered ${status}` };
}

/**
 * One POST of `body` to `target`, connected to `checked` only: through its agent when the pool has a free one,
 * otherwise on a connection of its own. Rejects with the error, marked `reusedSocket` when a kept-alive connection
 * failed before any answer.
 */
function send(target: URL, checked: CheckedAddress, body: string, deadline: AbortSignal, agents: LogoutAgents | undefined) {
  const agent = agents?.agentFor(target, checked);
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const outgoing: ClientRequest = request(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': String(Buffer.byteLength(body)),
        // §2.5 leaves caching to HTTP; a logout token must not sit in an intermediary.
        'cache-control': 'no-store',
      },
      // The agent's own lookup answers its checked address; a connection of its own is pinned the same way.
      ...(agent === undefined ? { agent: false, lookup: pinnedLookup(checked) } : { agent }),
      signal: deadline,
    });
    outgoing.on('response', resolve);
    outgoing.on('error', (error) => reject(Object.assign(error, { reusedSocket: outgoing.reusedSocket })));
    // A 101 (Switching Protocols) is neither a response nor an error to Node: without this listener it destroys the
    // socket and says nothing, so the attempt, its app's delivery slot and the service's close() waited for good.
    outgoing.on('upgrade', (answer: IncomingMessage, socket: { destroy(): void }) => {
      socket.destroy();
      reject(new SwitchedProtocols(answer.statusCode ?? 101));
    });
    // Whatever else ends the request unanswered settles the attempt (after a response or an error this does nothing).
    outgoing.on('close', () => reject(new Error('the connection closed before an answer')));
    outgoing.end(body);
  });
}

/** The app answered by switching protocols: no answer to a logout token, and a retry would get the same. */
class SwitchedProtocols extends Error {
  constructor(readonly status: number) {
    super(`the app answered ${status} (switching protocols)`);
  }
}

/** The outcome of an attempt whose POST got no answer (`error`, why), or only a switch to another protocol. */
function unanswered(error: unknown, deadline: AbortSignal): PostOutcome {
  if (error instanceof SwitchedProtocols) return { kind: 'refused', status: error.status, reason: error.message };
  return { kind: 'retry', reason: deadline.aborted ? 'the app did not answer in time' : 'the app could not be reached' };
}

/**
 * Lets the answer's body run out unread so its connection returns to the pool; resolves when it has (or is gone).
 * An app that keeps sending loses the connection, and the deadline, still armed on the request, ends a body that
 * never ends.
 */
function drain(response: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    let drained = 0;
    response.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > MOST_DRAINED) response.destroy();
    });
    response.once('end', resolve);
    // Cut mid-body (by the deadline, by the app): no concern of the outcome, already known.
    response.once('close', resolve);
    response.on('error', () => {});
  });
}

/**
 * `pending`, or a rejection once `signal` aborts (DNS has no signal of its own). The rejection waits for the end of
 * the abort's turn: a lookup still waiting for a slot gives up on the same abort and its rejection (microtasks) comes
 * first, saying the attempt was starved, not that the app's name servers did not answer.
 */
function abortable<T>(pending: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => void setImmediate(() => reject(new Error('the app did not answer in time')));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
