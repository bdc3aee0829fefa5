/**
 * Client ID metadata documents: an MCP client (an agent) names itself with an https URL as its `client_id`, and the
 * service reads its metadata (`client_name`, `redirect_uris`) from that URL instead of from a registration. The URL
 * is the client's, so the fetch is the guarded one of `jwks_uri` (pinned public address, deadline, no redirects) with
 * a 5 KiB cap; a document is kept as long as its HTTP caching headers allow, 24 hours at most, and nothing is kept of
 * a failure. Such a client is always public: it has no secret, and PKCE S256 is required of it like of every public
 * client. Every failure is `invalid_client` with a description of what was wrong, never of what was fetched.
 */
import { LRUCache } from 'lru-cache';
import type { IncomingHttpHeaders } from 'node:http';
import type { App, GrantType } from './app.js';
import { redirectURIProblem } from './app-validation.js';
import { displayTextProblem } from './display-text.js';
import { GuardedFetchError, guardedFetch } from '../client-assertion/guarded-fetch.js';
import type { ResolvedConfig } from '../config.js';
import { type OAuthError, unauthorizedClient } from '../errors.js';

/** The largest document read (the draft's suggestion: a metadata document is a few hundred bytes). */
const MAX_DOCUMENT_BYTES = 5 * 1024;
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

/** Why a client id URL may not name a document (the draft's rules), or `null`. */
function urlProblem(clientId: string): string | null {
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

/** Seconds a document may be kept per its response headers (RFC 9111 §5.2.2, §5.3), capped; 0: not at all. */
export function cacheSecondsOf(headers: IncomingHttpHeaders): number {
  const control = String(headers['cache-control'] ?? '').toLowerCase();
  if (/(^|[,\s])(no-store|no-cache)([,\s=]|$)/.test(control)) return 0;
  const maxAge = /(?:^|[,\s])max-age\s*=\s*"?(\d+)"?/.exec(control);
  if (maxAge !== null) return Math.min(Number(maxAge[1]), MAX_CACHE_SECONDS);
  const expires = headers.expires === undefined ? Number.NaN : Date.parse(headers.expires);
  if (!Number.isNaN(expires)) return Math.max(0, Math.min(Math.floor((expires - Date.now()) / 1000), MAX_CACHE_SECONDS));
  return HEURISTIC_CACHE_SECONDS;
}

/** What a document says, checked: the parts an {@link App} is made of. */
interface ClientDocument {
  redirectUris: string[];
  name: string | undefined;
  scope: string | undefined;
  grantTypes: GrantType[];
}

function stringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function parseDocument(clientId: string, body: Buffer): ClientDocument {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw refused('the client metadata document is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw refused('the client metadata document is not a JSON object');
  const doc = parsed as Record<string, unknown>;
  if (doc.client_id === undefined) throw refused('the client metadata document has no client_id');
  if (doc.client_id !== clientId) throw refused('the client metadata document names another client_id than its URL');
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
  for (const uri of doc.redirect_uris) {
    const problem = redirectURIProblem(uri);
    const url = problem === null ? new URL(uri) : undefined;
    // As for self-registered clients: https, or http on a loopback host; a private-use scheme needs an operator.
    const web = url !== undefined && (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname)));
    if (!web) throw refused('the client metadata document has a redirect_uri that is not https (or http on a loopback host)');
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
  return { redirectUris: [...new Set(doc.redirect_uris)], name, scope, grantTypes };
}

/**
 * Resolves client ids that are document URLs into {@link App}s, with the document cache of one service instance.
 * @example const app = await resolver.resolve(accountId, 'https://agent.example.com/client.json');
 */
export class ClientIdMetadataResolver {
  readonly #config: ResolvedConfig;
  readonly #cache = new LRUCache<string, ClientDocument>({ max: 1000 });
  readonly #inFlight = new Map<string, Promise<ClientDocument>>();
  readonly #ca: string | undefined;

  /** `fetch.ca`: trust anchors in place of the system's, for tests that serve documents with their own certificate. */
  constructor(config: ResolvedConfig, fetch: { ca?: string } = {}) {
    this.#config = config;
    this.#ca = fetch.ca;
  }

  /**
   * The public app a document URL names in `accountId`.
   * @throws OAuthError invalid_client (401) with what was wrong: the URL, the allow-list, the fetch or the document.
   */
  async resolve(accountId: string, clientId: string): Promise<App> {
    const problem = urlProblem(clientId);
    if (problem !== null) throw refused(problem);
    if (!(await allowed(this.#config, clientId, accountId)))
      throw refused('the client_id URL is not on the list of allowed client metadata documents');
    const doc = await this.#document(clientId);
    const host = new URL(clientId).host;
    return Object.freeze({
      accountId,
      clientId,
      redirectUris: Object.freeze([...doc.redirectUris]),
      grantTypes: Object.freeze([...doc.grantTypes]),
      tokenEndpointAuthMethod: 'none',
      // The name is the client's own claim: the host beside it is what a user can trust (the pages show both).
      name: doc.name === undefined ? host : `${doc.name} (${host})`,
      ...(doc.scope === undefined ? {} : { scope: doc.scope }),
    } satisfies App);
  }

  #document(clientId: string): Promise<ClientDocument> {
    const cached = this.#cache.get(clientId);
    if (cached !== undefined) return Promise.resolve(cached);
    let pending = this.#inFlight.get(clientId);
    if (pending === undefined) {
      pending = this.#fetch(clientId);
      const settled = pending.finally(() => this.#inFlight.delete(clientId));
      settled.catch(() => {});
      this.#inFlight.set(clientId, pending);
    }
    return pending;
  }

  async #fetch(clientId: string): Promise<ClientDocument> {
    let fetched: Awaited<ReturnType<typeof guardedFetch>>;
    try {
      fetched = await guardedFetch(clientId, {
        timeoutMs: this.#config.clientJwks.timeoutMs,
        maxBytes: MAX_DOCUMENT_BYTES,
        allowPrivateAddresses: this.#config.clientIdMetadataDocuments.allowPrivateAddresses,
        label: 'the client metadata document',
        accept: 'application/json',
        ca: this.#ca,
      });
    } catch (error) {
      if (error instanceof GuardedFetchError) throw refused(error.message);
      throw error;
    }
    const doc = parseDocument(clientId, fetched.body);
    const seconds = cacheSecondsOf(fetched.headers);
    if (seconds > 0) this.#cache.set(clientId, doc, { ttl: seconds * 1000 });
    return doc;
  }
}
