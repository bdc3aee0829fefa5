/**
 * Client ID metadata documents: an MCP client (an agent) names itself with an https URL as its `client_id`, and the
 * service reads its metadata (`client_name`, `redirect_uris`) from that URL instead of from a registration. The URL
 * is the client's, so the fetch is the guarded one of `jwks_uri` (pinned public address, deadline, no redirects) with
 * a 5 KiB cap; a document is kept as long as its HTTP caching headers allow, 24 hours at most. Such a client is
 * always public: it has no secret, and PKCE S256 is required of it like of every public client.
 *
 * Every refusal is `invalid_client`. One that the URL alone decides (its form, a port, the allow-list) says what was
 * wrong, and so does one about a document that names its URL (the client's own). Every other one, whatever the
 * network did, is {@link DOCUMENT_UNAVAILABLE}, the cause going to `onError` only (`client-id-metadata-retrieval.ts`
 * says why), and the URL is not fetched again for {@link FAILURE_RETRY_MS}. So is a document that would be one fetch
 * more than `maxConcurrentFetches` (`src/lib/fetch-slots.ts`), at once and without that pause.
 */
import { LRUCache } from 'lru-cache';
import type { IncomingHttpHeaders } from 'node:http';
import type { App, GrantType } from './app.js';
import { redirectURIProblem } from './app-validation.js';
import { displayTextProblem } from './display-text.js';
import { DocumentRetrievalError, retrieveDocument } from './client-id-metadata-retrieval.js';
import type { ResolvedConfig } from '../config.js';
import { busyRefusal, type OAuthError, unauthorizedClient } from '../errors.js';
import { FetchSlots } from '../lib/fetch-slots.js';
import { catchRejection } from '../lib/thenable.js';

/**
 * The one description of every document that could not be retrieved, whatever the cause: a port scanner learns
 * nothing from it. It says what a document must be, which is all its author needs.
 */
export const DOCUMENT_UNAVAILABLE =
  'the client metadata document could not be retrieved: it must be served over https with 200 as a JSON object whose client_id is its URL';
/**
 * How long a URL whose document could not be retrieved is refused without a fetch, in milliseconds, as a `jwks_uri`
 * is (`jwks-fetch.ts`): repeating a probe, to time it or to flood `onError`, costs one fetch per few seconds. Short
 * enough for the author of a document just fixed, and never a document kept (the draft forbids keeping a failure as one).
 */
export const FAILURE_RETRY_MS = 5000;
/** The route `onError` hears a retrieval failure under (the lookup does not know which request asked). */
const REPORT_ROUTE = 'client-id-metadata';
/** The longest a document is kept, whatever its headers say. */
const MAX_CACHE_SECONDS = 86_400;
/** How long a document without caching headers is kept (RFC 9111 §4.2.2 heuristic freshness). */
const HEURISTIC_CACHE_SECONDS = 300;
const MAX_URL_LENGTH = 2000;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether a `client_id` is to be read as a client ID metadata document's URL (it starts with `https://`); the ids
 * the service issues and the `apps` option accepts can never look like one.
 * @example isClientIdMetadataURL('https://agent.example.com/client.json') // true
 */
export function isClientIdMetadataURL(clientId: string): boolean {
  return clientId.startsWith('https://');
}

/**
 * Whether `clientId` names a client by its metadata document in this service: documents are enabled and it is an
 * https URL. With documents off, an https id can only be one of the host's own registry (an OpenID Federation
 * entity id, say), to be looked up and trusted like any other, so the paths that leave documents alone must not
 * skip it.
 * @example if (namesMetadataDocument(context.config, clientId)) return null; // never fetched on this path
 */
export function namesMetadataDocument(config: Pick<ResolvedConfig, 'clientIdMetadataDocuments'>, clientId: string): boolean {
  return config.clientIdMetadataDocuments.enabled && isClientIdMetadataURL(clientId);
}

function refused(description: string): OAuthError {
  return unauthorizedClient(description);
}

/**
 * Why a client id URL may not name a document (the draft's rules, and no port outside development), or `null`.
 * The draft lets a URL name a port; we do not, unless private addresses are allowed: on 443 only, a client_id can
 * reach no other service of a public host, and what is left of a port scan is which hosts answer https.
 */
function urlProblem(clientId: string, allowPorts: boolean): string | null {
  if (clientId.length > MAX_URL_LENGTH) return `the client_id URL must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return 'the client_id is not a URL';
  }
  // Written exactly as the parser reads it: no second spelling of one client (case, dot segments, default port).
  if (url.href !== clientId) return 'the client_id URL must be written in its normal form';
  if (url.username !== '' || url.password !== '') return 'the client_id URL must not contain userinfo';
  if (url.hash !== '' || clientId.includes('#')) return 'the client_id URL must not contain a fragment';
  if (url.pathname === '/') return 'the client_id URL must have a path';
  // The normal form has no port 443: any port left is another one.
  if (url.port !== '' && !allowPorts) return 'the client_id URL must not name a port';
  return null;
}

/** The allow-list check of `clientIdMetadataDocuments.allow`. */
async function allowed(config: ResolvedConfig, clientId: string, accountId: string): Promise<boolean> {
  const { allow } = config.clientIdMetadataDocuments;
  if (allow === undefined) return true;
  if (typeof allow === 'function') return (await allow(clientId, { accountId })) === true;
  const host = new URL(clientId).hostname;
  return allow.some((entry) => (entry.startsWith('*.') ? host.endsWith(entry.slice(1)) : host === entry));
}

/** The Age header's seconds, or 0 when it is missing or not a non-negative integer (RFC 9111 §5.1: then ignored). */
function ageOf(headers: IncomingHttpHeaders): number {
  const age = headers.age;
  return age !== undefined && /^\d+$/.test(age) ? Number(age) : 0;
}

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
/** The three forms of an HTTP-date (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime ones. */
const IMF_FIXDATE = new RegExp(`^${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`);

/**
 * An HTTP-date in milliseconds, or NaN when `value` is not one. `Date.parse` alone reads far more (`2099`, `-1`) as a
 * time, and would keep a document for a day whose header says nothing valid.
 */
function httpDate(value: string | undefined): number {
  if (value === undefined) return Number.NaN;
  if (IMF_FIXDATE.test(value) || RFC850_DATE.test(value)) return Date.parse(value);
  // asctime carries no zone, and is GMT (§5.6.7): said explicitly, or Date.parse would read it as local time.
  return ASCTIME_DATE.test(value) ? Date.parse(`${value} GMT`) : Number.NaN;
}

/** The Cache-Control directives, by lower-case name, each with its value (quotes removed), the first of each name. */
function directivesOf(headers: IncomingHttpHeaders): Map<string, string | undefined> {
  const directives = new Map<string, string | undefined>();
  for (const part of String(headers['cache-control'] ?? '').split(',')) {
    const [name, ...value] = part.split('=');
    const key = name?.trim().toLowerCase() ?? '';
    if (key === '' || directives.has(key)) continue;
    const raw = value.length === 0 ? undefined : value.join('=').trim();
    directives.set(key, raw?.replace(/^"(.*)"$/, '$1'));
  }
  return directives;
}

/**
 * Seconds a document may be kept per its response headers (RFC 9111 §5.2.2, §5.3), capped; 0: not at all. The
 * freshness left is its lifetime less its age (§4.2.3): a cache between us and the agent's host may have held it for
 * most of its `max-age`, which the `Age` header says. With `Expires`, the lifetime is counted from `Date` (§4.2.1, so
 * that the host's clock and ours need not agree) and the age is the larger of `Age` and the time since `Date`.
 * Freshness that is stated but invalid keeps nothing: a `max-age` that is not a number of seconds (§4.2.1 has such a
 * response stale) and an `Expires` that is not an HTTP-date (§5.3: "already expired"), never the 5-minute default.
 */
export function cacheSecondsOf(headers: IncomingHttpHeaders): number {
  const directives = directivesOf(headers);
  if (directives.has('no-store') || directives.has('no-cache')) return 0;
  const age = ageOf(headers);
  if (directives.has('max-age')) {
    const maxAge = directives.get('max-age') ?? '';
    return /^\d+$/.test(maxAge) ? Math.max(0, Math.min(Number(maxAge) - age, MAX_CACHE_SECONDS)) : 0;
  }
  if (headers.expires !== undefined) {
    const expires = httpDate(headers.expires);
    if (Number.isNaN(expires)) return 0;
    const now = Date.now();
    const parsedDate = httpDate(headers.date);
    // No valid Date: the time of receipt stands in for it (§6.6.1 of RFC 9110 lets a recipient add one).
    const date = Number.isNaN(parsedDate) ? now : parsedDate;
    const currentAge = Math.max(age, (now - date) / 1000);
    return Math.max(0, Math.min(Math.floor((expires - date) / 1000 - currentAge), MAX_CACHE_SECONDS));
  }
  return HEURISTIC_CACHE_SECONDS;
}

/** What a document says, checked: the parts an {@link App} is made of. */
interface ClientDocument {
  redirectUris: string[];
  /** `post_logout_redirect_uris` (RP-Initiated Logout §3.1); without them, `end_session` may return to `redirectUris`. */
  postLogoutRedirectUris: string[] | undefined;
  name: string | undefined;
  scope: string | undefined;
  grantTypes: GrantType[];
  /** `dpop_bound_access_tokens` (RFC 9449 §5.2) and `require_pushed_authorization_requests` (RFC 9126 §6): true. */
  requireDPoP: boolean;
  requirePushedAuthorizationRequests: boolean;
}

function stringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/** As for self-registered clients: https, or http on a loopback host; a private-use scheme needs an operator. */
function isWebRedirectURI(uri: string): boolean {
  if (redirectURIProblem(uri) !== null) return false;
  const url = new URL(uri);
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
}

/** The document, retrieved (it names its URL), checked; what is wrong with it is the client's to hear. */
function parseDocument(doc: Record<string, unknown>): ClientDocument {
  // A document anyone can read cannot hold a secret: such a client is public, nothing else.
  if (doc.client_secret !== undefined || doc.client_secret_expires_at !== undefined) {
    throw refused('the client metadata document must not contain a client secret');
  }
  if (doc.token_endpoint_auth_method !== undefined && doc.token_endpoint_auth_method !== 'none') {
    throw refused('the client metadata document must use token_endpoint_auth_method none (a public client)');
  }
  if (!stringList(doc.redirect_uris) || doc.redirect_uris.length === 0) {
    throw refused('the client metadata document has no redirect_uris');
  }
  if (!doc.redirect_uris.every(isWebRedirectURI)) {
    throw refused('the client metadata document has a redirect_uri that is not https (or http on a loopback host)');
  }
  // Read, not ignored: an end_session return it names must be one of them, not any of its redirect URIs.
  const logout = doc.post_logout_redirect_uris;
  if (logout !== undefined && (!stringList(logout) || !logout.every(isWebRedirectURI))) {
    throw refused('the client metadata document has post_logout_redirect_uris that are not https (or http on a loopback host)');
  }
  const name = doc.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.length === 0 || name.length > 100 || displayTextProblem(name) !== null)) {
    throw refused('the client metadata document has a client_name that cannot be shown (1-100 plain characters)');
  }
  const scope = doc.scope;
  if (scope !== undefined && (typeof scope !== 'string' || !/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/.test(scope))) {
    throw refused('the client metadata document has a malformed scope');
  }
  const grants = doc.grant_types;
  if (grants !== undefined && (!stringList(grants) || !grants.includes('authorization_code'))) {
    throw refused('the client metadata document must list authorization_code in grant_types');
  }
  const grantTypes: GrantType[] =
    grants === undefined || grants.includes('refresh_token') ? ['authorization_code', 'refresh_token'] : ['authorization_code'];
  const postLogoutRedirectUris = logout === undefined ? undefined : [...new Set(logout)];
  return {
    redirectUris: [...new Set(doc.redirect_uris)],
    postLogoutRedirectUris,
    name,
    scope,
    grantTypes,
    requireDPoP: demand(doc, 'dpop_bound_access_tokens'),
    requirePushedAuthorizationRequests: demand(doc, 'require_pushed_authorization_requests'),
  };
}

/**
 * A demand the client makes of itself (RFC 9449 §5.2, RFC 9126 §6), honoured, never ignored: a client that says its
 * requests come only with a DPoP proof, or only pushed, counts on the service refusing any that do not (one forged by
 * whoever got hold of its code or refresh token, or crafted in its name), as registration refuses what it would not do.
 */
function demand(doc: Record<string, unknown>, name: string): boolean {
  const value = doc[name];
  if (value !== undefined && typeof value !== 'boolean') throw refused(`the client metadata document has a ${name} that is not a boolean`);
  return value === true;
}

/**
 * Resolves client ids that are document URLs into {@link App}s, with the document cache of one service instance.
 * @example const app = await resolver.resolve(accountId, 'https://agent.example.com/client.json');
 */
export class ClientIdMetadataResolver {
  readonly #config: ResolvedConfig;
  readonly #documents = new LRUCache<string, ClientDocument>({ max: 1000 });
  // URLs whose document could not be retrieved (each kept FAILURE_RETRY_MS), apart from the documents: anyone can
  // make up failing URLs, and a flood of them must not push good documents out (every agent's request would refetch).
  readonly #failures = new LRUCache<string, true>({ max: 1000 });
  readonly #inFlight = new Map<string, Promise<ClientDocument>>();
  readonly #slots: FetchSlots;
  // Whether `onError` has heard that every slot is taken since one was last given back: once per such spell, not
  // once per refused request (which anyone can send at will).
  #busyReported = false;
  readonly #ca: string | undefined;

  /** `fetch.ca`: trust anchors in place of the system's, for tests that serve documents with their own certificate. */
  constructor(config: ResolvedConfig, fetch: { ca?: string } = {}) {
    this.#config = config;
    this.#slots = new FetchSlots(config.clientIdMetadataDocuments.maxConcurrentFetches);
    this.#ca = fetch.ca;
  }

  /**
   * The public app a document URL names in `accountId`.
   * @throws OAuthError invalid_client (401): what was wrong with the URL, the allow-list or a retrieved document, or
   *   {@link DOCUMENT_UNAVAILABLE} (the cause to `onError`) when no document could be retrieved.
   */
  async resolve(accountId: string, clientId: string): Promise<App> {
    const problem = urlProblem(clientId, this.#config.clientIdMetadataDocuments.allowPrivateAddresses);
    if (problem !== null) throw refused(problem);
    if (!(await allowed(this.#config, clientId, accountId)))
      throw refused('the client_id URL is not on the list of allowed client metadata documents');
    const doc = await this.#document(accountId, clientId);
    const host = new URL(clientId).host;
    return Object.freeze({
      accountId,
      clientId,
      redirectUris: Object.freeze([...doc.redirectUris]),
      ...(doc.postLogoutRedirectUris === undefined ? {} : { postLogoutRedirectUris: Object.freeze([...doc.postLogoutRedirectUris]) }),
      grantTypes: Object.freeze([...doc.grantTypes]),
      tokenEndpointAuthMethod: 'none',
      ...(doc.requireDPoP ? { requireDPoP: true } : {}),
      ...(doc.requirePushedAuthorizationRequests ? { requirePushedAuthorizationRequests: true } : {}),
      // The name is the client's own claim: the host beside it is what a user can trust (the pages show both).
      name: doc.name === undefined ? host : `${doc.name} (${host})`,
      ...(doc.scope === undefined ? {} : { scope: doc.scope }),
    } satisfies App);
  }

  #document(accountId: string, clientId: string): Promise<ClientDocument> {
    const cached = this.#documents.get(clientId);
    if (cached !== undefined) return Promise.resolve(cached);
    if (this.#failures.has(clientId)) return Promise.reject(refused(DOCUMENT_UNAVAILABLE));
    let pending = this.#inFlight.get(clientId);
    if (pending === undefined) {
      const release = this.#slots.take();
      if (release === null) return Promise.reject(this.#busy(accountId, clientId));
      // The slot is given back once the host name's lookup has settled too, not at the deadline that answered the
      // client: the lookup holds a thread of libuv's pool until then, and made-up hosts whose name server never
      // answers would otherwise start more lookups each deadline than maxConcurrentFetches (guarded-fetch.ts).
      const lookups: Promise<unknown>[] = [];
      pending = this.#fetch(accountId, clientId, (lookup) => lookups.push(lookup)).finally(() => {
        void Promise.allSettled(lookups).then(() => {
          release();
          this.#busyReported = false;
        });
      });
      const settled = pending.finally(() => this.#inFlight.delete(clientId));
      settled.catch(() => {});
      this.#inFlight.set(clientId, pending);
    }
    return pending;
  }

  /**
   * One retrieval; `accountId` is the account of the request that started it, for the report; `onLookup` is told of
   * the DNS lookup, which may outlive it.
   */
  async #fetch(accountId: string, clientId: string, onLookup: (lookup: Promise<unknown>) => void): Promise<ClientDocument> {
    let retrieved: Awaited<ReturnType<typeof retrieveDocument>>;
    try {
      retrieved = await retrieveDocument(clientId, {
        timeoutMs: this.#config.clientJwks.timeoutMs,
        allowPrivateAddresses: this.#config.clientIdMetadataDocuments.allowPrivateAddresses,
        ca: this.#ca,
        onLookup,
      });
    } catch (error) {
      if (!(error instanceof DocumentRetrievalError)) throw error;
      this.#failures.set(clientId, true, { ttl: FAILURE_RETRY_MS });
      this.#report(error, accountId);
      throw refused(DOCUMENT_UNAVAILABLE);
    }
    // A document that names its URL is the client's own: what is wrong with it is said, and it is not kept.
    const doc = parseDocument(retrieved.document);
    const seconds = cacheSecondsOf(retrieved.headers);
    if (seconds > 0) this.#documents.set(clientId, doc, { ttl: seconds * 1000 });
    return doc;
  }

  /**
   * The refusal of a document no slot is left to fetch (`maxConcurrentFetches`): the one of a document that could not
   * be retrieved, at once (it says nothing of the URL's network) and not remembered (the URL is not at fault). Marked
   * busy, so that the guard does not read it as the client gone and refuse its tokens `invalid_token`.
   */
  #busy(accountId: string, clientId: string): OAuthError {
    if (!this.#busyReported) {
      this.#busyReported = true;
      const limit = this.#config.clientIdMetadataDocuments.maxConcurrentFetches;
      this.#report(
        new DocumentRetrievalError(
          clientId,
          `${limit} documents are being fetched already (clientIdMetadataDocuments.maxConcurrentFetches)`,
        ),
        accountId,
      );
    }
    return busyRefusal(refused(DOCUMENT_UNAVAILABLE));
  }

  /** Tells the operator why (the client is told only {@link DOCUMENT_UNAVAILABLE}); a failing `onError` changes nothing. */
  #report(error: DocumentRetrievalError, accountId: string): void {
    try {
      catchRejection(this.#config.onError?.(error, { route: REPORT_ROUTE, accountId }));
    } catch {
      // the host's reporter failed; the client is refused either way
    }
  }
}
