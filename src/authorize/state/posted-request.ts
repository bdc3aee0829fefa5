/**
 * Posted requests parked for the GET that carries the session cookie. An app's form posts an authorization or
 * RP-initiated logout request from its own site, and SameSite=Lax keeps the session cookie off that cross-site POST,
 * so the service answers with a 303 to a GET of the same endpoint: a top-level navigation, which carries it. The
 * posted values (`id_token_hint`, `login_hint`, `claims`, `state`, …: an ID token may hold the user's claims) must
 * not ride in that GET's URL, which browsers keep in their history and send to every access log and in `Referer`
 * (the reason the app posted them). So the request is parked in the Store under a random handle and the 303 carries
 * only the handle, as PAR's `request_uri` does (RFC 9126).
 *
 * Why a handle and not a page that posts the form again from the service's own origin: such a page turns a
 * cross-site POST into a same-site one with the cookie, which defeats SameSite for every posted field (a forged
 * logout confirmation among them) and needs a script the CSP must let run. The handle costs one Store write and one
 * take per cookieless POST; a record holds at most the endpoint's 8 KiB cap of parameters, lives
 * {@link POSTED_REQUEST_TTL} seconds under a prefix of its own (MemoryStore evicts only other parked posts when a flood
 * fills it), and is spent by its first GET, so a URL found later in a history or a log leads nowhere. It is bound to
 * its endpoint and account, and to no secret: whoever holds it can do no more with it than with the URL of the GET
 * it stands for, which anyone could already send a browser to. The record lives under
 * `posted-request:{sha256(handle)}` (docs/ARCHITECTURE.md#stored-records). Anyone can park one, with no credential,
 * so each counts against its client address as an interaction does (`interactionsPerAddress`, interaction-bound.ts):
 * without that, a flood of cookieless posts would fill a Redis whose `noeviction` policy then refuses every write.
 * An authorization request's GET then stores its interaction on the slot its post took.
 */
import { OAuthError } from '../../errors.js';
import type { SentinelContext } from '../../http/context.js';
import type { SentinelRequest } from '../../http/messages.js';
import { digest, randomSecret } from '../../lib/random-secrets.js';
import { clientIP } from '../../http/client-ip.js';
import { takeInteractionSlot } from './interaction-bound.js';
import { parseStoredRecord } from '../../stores/stored-record.js';

const KEY_PREFIX = 'posted-request:';
const HANDLE = /^[A-Za-z0-9_-]{43}$/;

/** The one query parameter of the GET a posted request is forwarded to. */
export const POSTED_REQUEST_PARAM = 'posted_request';

/** Seconds a parked request waits for its GET: the browser follows the 303 at once. */
export const POSTED_REQUEST_TTL = 60;

/** The endpoints whose posted requests are parked. */
export type PostedEndpoint = 'authorize' | 'end-session';

interface PostedRequest {
  endpoint: PostedEndpoint;
  accountId: string;
  /** The parameters, in order, as name/value pairs. */
  params: [string, string][];
}

function postedKey(handle: string): string {
  return `${KEY_PREFIX}${digest(handle)}`;
}

function isPair(value: unknown): value is [string, string] {
  return Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string';
}

/**
 * Parks a posted request's parameters and returns the query of the GET that stands for it (`posted_request=…`).
 * @throws OAuthError temporarily_unavailable (429) when the client's address has parked or started its share.
 *
 * @example
 * redirect(303, `${path}?${await parkPostedRequest(context, request, 'end-session', accountId, new URLSearchParams(pairs))}`)
 */
export async function parkPostedRequest(
  context: SentinelContext,
  request: SentinelRequest,
  endpoint: PostedEndpoint,
  accountId: string,
  params: URLSearchParams,
): Promise<string> {
  await takeInteractionSlot(context, clientIP(context.config, request));
  const handle = randomSecret();
  const record: PostedRequest = { endpoint, accountId, params: [...params] };
  await context.store.set(postedKey(handle), JSON.stringify(record), POSTED_REQUEST_TTL * 1000);
  return new URLSearchParams({ [POSTED_REQUEST_PARAM]: handle }).toString();
}

/**
 * The request a GET stands for: `request` itself (at once) when its query names no parked request; otherwise (a
 * promise of) `request` with the parked parameters as its query, the record spent (single use). A handle beside
 * other parameters, or one that is unknown, spent, expired or parked for another endpoint or account, is refused.
 *
 * @example
 * const effective = await resolvePostedRequest(context, request, 'authorize', accountId);
 * @throws OAuthError invalid_request (400) for a handle that is not usable.
 */
export function resolvePostedRequest(
  context: SentinelContext,
  request: SentinelRequest,
  endpoint: PostedEndpoint,
  accountId: string,
): SentinelRequest | Promise<SentinelRequest> {
  // The common case, a request that names no parked one, is answered at once: no promise and microtask of its own.
  if (request.method === 'POST' || !request.query.has(POSTED_REQUEST_PARAM)) return request;
  return parkedRequest(context, request, endpoint, accountId);
}

async function parkedRequest(
  context: SentinelContext,
  request: SentinelRequest,
  endpoint: PostedEndpoint,
  accountId: string,
): Promise<SentinelRequest> {
  const handles = request.query.getAll(POSTED_REQUEST_PARAM);
  const handle = handles[0] ?? '';
  const expired = new OAuthError(
    'invalid_request',
    'This link has expired or was already used. Go back to the application and start again.',
  );
  // Alone: nothing in the URL may add to or override what was posted.
  if (handles.length !== 1 || [...request.query.keys()].length !== 1 || !HANDLE.test(handle)) throw expired;
  const record = parseStoredRecord<PostedRequest>(
    await context.store.take(postedKey(handle)),
    (candidate) => typeof candidate.endpoint === 'string' && typeof candidate.accountId === 'string' && Array.isArray(candidate.params),
  );
  if (record === null || record.endpoint !== endpoint || record.accountId !== accountId || !record.params.every(isPair)) throw expired;
  const query = new URLSearchParams(record.params);
  return { ...request, query, rawQuery: query.toString() };
}
