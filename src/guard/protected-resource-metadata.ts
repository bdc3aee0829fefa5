/**
 * Protected resource metadata (RFC 9728): the document a resource server (an MCP server) publishes so that a client
 * that got a 401 from it can find the authorization server to ask. The service builds the document and the URL it
 * lives at; the adapters' `protectedResourceMetadata(sentinel, options)` only serve it, and a guard made with the
 * same `resource` names that URL in its `WWW-Authenticate` challenges (RFC 9728 §5.1) and accepts only the tokens of
 * the account the document names (resource-servers.ts).
 */
import type { ResolvedConfig } from '../config.js';
import { ConfigurationError } from '../errors.js';
import type { SentinelContext } from '../http/context.js';
import type { SentinelResponse } from '../http/messages.js';
import { ACCOUNT_ID_RULE, isAccountId } from '../lib/account-id.js';
import { assertKnownKeys, type KeysOf } from '../lib/strict-options.js';
import { resourceURIProblem } from '../token/resource-indicators.js';
import { isScopeToken } from '../token/scope-tokens.js';
import { nameAuthorizationServer, soleAppsAccount } from './resource-servers.js';

/**
 * What a protected resource publishes about itself (RFC 9728 §2).
 *
 * @example
 * app.get('/.well-known/oauth-protected-resource/mcp', protectedResourceMetadata(sentinel, { resource: 'https://mcp.example.com/mcp', accountId: '123456' }));
 */
export interface ProtectedResourceMetadataOptions {
  /** The resource's identifier (RFC 8707 URI, https, no fragment): what clients send as `resource` and find in `aud`. */
  resource: string;
  /** The scopes the resource understands (`scopes_supported`), e.g. those an MCP client should ask for. */
  scopesSupported?: readonly string[] | undefined;
  /**
   * The account whose issuer is the resource's authorization server. May be left out when the `apps` option holds
   * apps of one account only (that one is taken). A guard made with the same `resource` then refuses the tokens of
   * every other account, even those whose `aud` names the resource.
   */
  accountId?: string | undefined;
}

/**
 * The served document and where it belongs.
 * @example const { path, respond } = sentinel.protectedResourceMetadata({ resource, accountId }); // mount respond() at path
 */
export interface ProtectedResourceMetadata {
  /** The well-known URL of the document (RFC 9728 §3.1: the well-known segment inserted before the resource's path). */
  url: string;
  /** Its path, where the host mounts the handler. */
  path: string;
  /** The document itself. */
  document: Readonly<Record<string, unknown>>;
  /** The response to a GET (or HEAD) of the document. */
  respond(): SentinelResponse;
}

const WELL_KNOWN = '/.well-known/oauth-protected-resource';

/**
 * The URL of a resource's metadata (RFC 9728 §3.1): `https://mcp.example.com/mcp` →
 * `https://mcp.example.com/.well-known/oauth-protected-resource/mcp`. The query of the resource is kept (§3.1).
 *
 * @example protectedResourceMetadataURL('https://mcp.example.com/mcp') // 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp'
 */
export function protectedResourceMetadataURL(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.origin}${WELL_KNOWN}${path}${url.search}`;
}

const FIELD = 'protectedResourceMetadata.resource';

const OPTION_KEYS = { resource: true, scopesSupported: true, accountId: true } satisfies KeysOf<ProtectedResourceMetadataOptions>;

/**
 * Refuses options the document cannot honour, as the other option objects are refused: a misspelled `accountID`
 * would otherwise be dropped and the sole account of the `apps` option named instead, so the resource's guard would
 * take that account's tokens and refuse those of the account meant; a `scopesSupported` string would be published
 * as one scope per character.
 */
function assertOptions(options: ProtectedResourceMetadataOptions): void {
  assertKnownKeys(options, OPTION_KEYS, 'protectedResourceMetadata');
  const { resource, scopesSupported, accountId } = options as Record<keyof ProtectedResourceMetadataOptions, unknown>;
  if (typeof resource !== 'string') throw new ConfigurationError(FIELD, 'must be a string (an RFC 8707 resource URI)');
  if (
    scopesSupported !== undefined &&
    !(Array.isArray(scopesSupported) && scopesSupported.every((s) => typeof s === 'string' && isScopeToken(s)))
  ) {
    throw new ConfigurationError('protectedResourceMetadata.scopesSupported', 'must be a list of scope tokens (RFC 6749 §3.3, no spaces)');
  }
  if (accountId !== undefined && !(typeof accountId === 'string' && isAccountId(accountId))) {
    throw new ConfigurationError('protectedResourceMetadata.accountId', `must be an account id: ${ACCOUNT_ID_RULE}`);
  }
}

/**
 * Why `resource` cannot have metadata served at a path of its own, or `null`. RFC 9728 §3.1 keeps the resource's
 * query in the metadata URL, but a host mounts the handler at {@link ProtectedResourceMetadata.path}, which a route
 * matches without the query: resources told apart by their query would get one handler, answering for all of them
 * with the first one's `resource` (which a client must find equal to its own, §3.3).
 */
function mountProblem(resource: string): string | null {
  // Any `?` starts a query: a fragment is already refused. An empty query (`…/mcp?`) is one too: it is another URI.
  return resource.includes('?')
    ? 'must not contain a query: its metadata would be served at the path of the resource without it (RFC 9728 §3.1)'
    : null;
}

/** Metadata URL → the resource whose metadata was built for it, per service (keyed as resource-servers.ts is). */
const builtFor = new WeakMap<ResolvedConfig, Map<string, string>>();

/**
 * Records that `url` serves `resource`'s metadata, refusing a second resource at the same URL: `https://mcp.example.com`
 * and `https://mcp.example.com/` (§3.1 drops the slash after a bare host), or spellings the URL parser makes one (the
 * host's case, a default port). Tokens name the resource exactly (`aud`), so only one spelling can be served.
 */
function claimMetadataURL(config: ResolvedConfig, url: string, resource: string): void {
  let built = builtFor.get(config);
  if (built === undefined) {
    built = new Map();
    builtFor.set(config, built);
  }
  const other = built.get(url);
  if (other !== undefined && other !== resource) {
    throw new ConfigurationError(
      FIELD,
      `${resource} has the metadata URL ${url} of ${other}, built before (RFC 9728 §3.1); use one spelling of the resource`,
    );
  }
  built.set(url, resource);
}

function accountOf(context: SentinelContext, options: ProtectedResourceMetadataOptions): string {
  const accountId = options.accountId ?? soleAppsAccount(context.config);
  if (accountId === undefined) {
    throw new ConfigurationError(
      'protectedResourceMetadata.accountId',
      'is required: the authorization server is the issuer of one account, and the apps option does not name exactly one',
    );
  }
  return accountId;
}

/**
 * Builds a resource's metadata once; the adapters serve {@link ProtectedResourceMetadata.respond}. The account it
 * names becomes the one whose tokens the resource's guard accepts: the guard and the document cannot disagree.
 * @throws ConfigurationError for an unknown option, a resource that is not a resource indicator, has a query, or has
 *   the metadata URL of another resource built before; scopes that are not scope tokens; or no account to name.
 * @example const metadata = createProtectedResourceMetadata(context, { resource: 'https://mcp.example.com/mcp', accountId });
 */
export function createProtectedResourceMetadata(
  context: SentinelContext,
  options: ProtectedResourceMetadataOptions,
): ProtectedResourceMetadata {
  assertOptions(options);
  const problem = resourceURIProblem(options.resource) ?? mountProblem(options.resource);
  if (problem !== null) throw new ConfigurationError(FIELD, problem);
  const url = protectedResourceMetadataURL(options.resource);
  const accountId = accountOf(context, options);
  claimMetadataURL(context.config, url, options.resource);
  nameAuthorizationServer(context, options.resource, accountId);
  const document = Object.freeze({
    resource: options.resource,
    authorization_servers: [context.accountIssuer(accountId)],
    // RFC 6750 §2.1 only: a token in a query or a form body ends up in logs and histories.
    bearer_methods_supported: ['header'],
    ...(options.scopesSupported === undefined ? {} : { scopes_supported: [...options.scopesSupported] }),
  });
  const body = JSON.stringify(document);
  const maxAge = context.config.jwksMaxAge;
  return {
    url,
    path: new URL(url).pathname,
    document,
    respond: () => ({
      status: 200,
      headers: {
        'content-type': 'application/json;charset=UTF-8',
        'cache-control': `public, max-age=${maxAge}`,
        'x-content-type-options': 'nosniff',
        // Browser-based MCP clients read it across origins (RFC 9728 §3.2); it holds nothing secret.
        'access-control-allow-origin': '*',
      },
      body,
    }),
  };
}
