/**
 * The authorization servers of a protected resource: the accounts whose issuers its protected resource metadata
 * (RFC 9728) names in `authorization_servers`. Building the metadata records them here, and the guard of the same
 * resource accepts only tokens those issuers issued (RFC 9068 §4: the resource checks `iss`). The audience alone is
 * not enough: `defaultResources` are the whole service's, so an app of any account may get a token for the resource.
 */
import type { ResolvedConfig } from '../config.js';
import { ConfigurationError } from '../errors.js';
import type { SentinelContext } from '../http/context.js';

interface ResourceServers {
  /** Resource → the accounts its metadata names, as built so far. */
  named: Map<string, Set<string>>;
  /** The one account of the `apps` option, or `null` when it names none or several: computed once. */
  sole: string | null | undefined;
}

// Keyed by the configuration, not the context: every request gets its own (request-scoped) context, and the metadata
// is built with the service's.
const byConfig = new WeakMap<ResolvedConfig, ResourceServers>();

function serversOf(config: ResolvedConfig): ResourceServers {
  let servers = byConfig.get(config);
  if (servers === undefined) {
    servers = { named: new Map(), sole: undefined };
    byConfig.set(config, servers);
  }
  return servers;
}

/**
 * The one account the `apps` option holds apps of, or `undefined` when it holds none or several: the authorization
 * server a resource's metadata names when it is given no `accountId`.
 * @example const accountId = options.accountId ?? soleAppsAccount(context.config);
 */
export function soleAppsAccount(config: ResolvedConfig): string | undefined {
  const servers = serversOf(config);
  if (servers.sole === undefined) {
    const accounts = new Set(config.apps.map((app) => app.accountId));
    servers.sole = accounts.size === 1 ? ([...accounts][0] as string) : null;
  }
  return servers.sole ?? undefined;
}

/**
 * Records that `resource`'s metadata names `accountId`'s issuer as an authorization server. Metadata built twice
 * for one resource with two accounts names both, so the guard accepts the tokens of either.
 * @example nameAuthorizationServer(context, 'https://mcp.example.com/mcp', '123456');
 */
export function nameAuthorizationServer(context: SentinelContext, resource: string, accountId: string): void {
  const { named } = serversOf(context.config);
  const accounts = named.get(resource);
  if (accounts === undefined) named.set(resource, new Set([accountId]));
  else accounts.add(accountId);
}

/**
 * Whether a token of `accountId` is one `resource` accepts: its metadata names the account; without metadata, the
 * caller pinned the account itself (`expected`, already compared) or the `apps` option holds this account only.
 * @throws ConfigurationError when nothing names the resource's authorization server: accepting every account's
 * tokens would let any tenant's app in.
 * @example if (!isAuthorizationServerOf(context, resource, facts.accountId, options.accountId)) throw invalidToken();
 */
export function isAuthorizationServerOf(
  context: SentinelContext,
  resource: string,
  accountId: string,
  expected: string | undefined,
): boolean {
  const named = serversOf(context.config).named.get(resource);
  if (named !== undefined) return named.has(accountId);
  if (expected !== undefined) return true;
  const sole = soleAppsAccount(context.config);
  if (sole !== undefined) return sole === accountId;
  throw new ConfigurationError(
    'resource',
    `${resource} names no authorization server: build its protected resource metadata first ` +
      '(sentinel.protectedResourceMetadata({ resource, accountId })), or expect an accountId',
  );
}
