/**
 * One delivery attempt of a logout token (OpenID Connect Back-Channel Logout 1.0 §2.5): `POST` form-encoded
 * `logout_token=…` to the app's `backchannelLogoutUri`, defensively, since the address is the app's.
 *
 * - The target passes the `jwks_uri` address guard at every attempt, and the connection is pinned to the address
 *   checked (no DNS rebinding between check and connect): src/sessions/logout-target.ts.
 * - One deadline (5 s) covers DNS, connect and the answer's status line; the body of the answer is never read.
 * - Redirects are not followed (§2.8 wants a 200; a 3xx is the app's mistake, and following it would leave the guard).
 *
 * The outcome says whether a retry may help: timeouts, connection errors and 5xx may pass; a 4xx is the app refusing
 * the token, and a refused address or a redirect stays what it is.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveLogoutTarget } from '../sessions/logout-target.js';

/** Longest one attempt may take, in milliseconds (the brief: each POST bounded to at most 5 s). */
export const LOGOUT_POST_TIMEOUT_MS = 5000;

/** What one attempt came to; `reason` names what happened, never the token or the app's answer body. */
export type PostOutcome =
  | { kind: 'delivered'; status: number }
  | { kind: 'refused'; status?: number | undefined; reason: string }
  | { kind: 'retry'; status?: number | undefined; reason: string };

/** How one attempt is made. */
export interface PostOptions {
  allowPrivateAddresses: boolean;
  timeoutMs?: number | undefined;
  /** Cuts the attempt off (the service is closing). */
  signal?: AbortSignal | undefined;
}

/**
 * Posts `logoutToken` to `uri` once.
 *
 * @example
 * const outcome = await postLogoutToken('https://app.example.com/logout', token, { allowPrivateAddresses: false });
 * if (outcome.kind === 'retry') scheduleAgain();
 */
export async function postLogoutToken(uri: string, logoutToken: string, options: PostOptions): Promise<PostOutcome> {
  let target: URL;
  try {
    target = new URL(uri);
  } catch {
    return { kind: 'refused', reason: 'the back-channel logout URI is not a URL' };
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') {
    return { kind: 'refused', reason: 'the back-channel logout URI must use https' };
  }
  const timeout = AbortSignal.timeout(options.timeoutMs ?? LOGOUT_POST_TIMEOUT_MS);
  const deadline = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  let pinned: { address: string; family: number };
  try {
    pinned = await abortable(resolveLogoutTarget(uri, options.allowPrivateAddresses), deadline);
  } catch (error) {
    const message = deadline.aborted ? 'the app did not answer in time' : (error as Error).message;
    // A name that does not resolve (yet) may resolve on the next attempt; a refused address will not change.
    return /does not resolve|in time/.test(message) ? { kind: 'retry', reason: message } : { kind: 'refused', reason: message };
  }
  const pinnedLookup: LookupFunction = (_host, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all === true) {
      (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [pinned]);
    } else {
      callback(null, pinned.address, pinned.family);
    }
  };
  const body = `logout_token=${encodeURIComponent(logoutToken)}`;
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  let response: IncomingMessage;
  try {
    response = await new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = send(target, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': String(Buffer.byteLength(body)),
          // §2.5 leaves caching to HTTP; a logout token must not sit in an intermediary.
          'cache-control': 'no-store',
        },
        lookup: pinnedLookup,
        signal: deadline,
        agent: false,
      });
      outgoing.on('response', resolve);
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  } catch {
    return { kind: 'retry', reason: deadline.aborted ? 'the app did not answer in time' : 'the app could not be reached' };
  }
  const status = response.statusCode ?? 0;
  // The answer's body is of no use: drop it without reading (and the socket with it, agent: false).
  response.destroy();
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status >= 300 && status < 400) return { kind: 'refused', status, reason: `the app answered ${status}; redirects are not followed` };
  if (status >= 400 && status < 500) return { kind: 'refused', status, reason: `the app answered ${status}` };
  return { kind: 'retry', status, reason: `the app answered ${status}` };
}

/** `pending`, or a rejection once `signal` aborts (DNS has no signal of its own). */
function abortable<T>(pending: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new Error('the app did not answer in time'));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
