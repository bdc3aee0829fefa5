/**
 * Method + path → handler. `null` for paths that are not ours, so the host's own routes run untouched.
 */
import type { SentinelContext } from './context.js';
import type { CorsPolicy } from './cors.js';
import type { OAuthError } from '../errors.js';
import type { EventInput } from '../events/sentinel-event.js';
import type { SentinelRequest, SentinelResponse } from './messages.js';

/**
 * Builds the audit event of a refused request on one route (the table's `deniedEvent`, `src/events/denied-events.ts`).
 * `request` is absent for `completeLogin()`, which the edge runs without one.
 */
export type DeniedEventBuilder = (
  context: SentinelContext,
  request: SentinelRequest | undefined,
  params: RouteParams,
  error: OAuthError,
) => EventInput;

/** Path parameters of a matched route. */
export interface RouteParams {
  accountId: string;
  /** Present on routes whose path has a `{clientId}` segment (client management). */
  clientId?: string;
}

/** A route's handler. */
export type RouteHandler = (context: SentinelContext, request: SentinelRequest, params: RouteParams) => Promise<SentinelResponse>;

/**
 * How a route renders errors that escape its handler; `request` is absent for `completeLogin()`, which answers the
 * browser through the host and has no request of its own.
 */
export type ErrorRenderer = (context: SentinelContext, request: SentinelRequest | undefined, error: OAuthError) => SentinelResponse;

/**
 * Where the edge runs work, and what it needs to know to answer a failure there: a route of the table, or an entry
 * point that is not an HTTP route (`completeLogin()`). `name` is what `onError` and telemetry see.
 */
export interface EdgeEntry {
  name: string;
  /** Defaults to the RFC 6749 §5.2 JSON error body. */
  renderError?: ErrorRenderer;
  /** The audit event a refusal here produces, if any. */
  deniedEvent?: DeniedEventBuilder;
  /** Cross-origin reads from browser apps (`src/http/cors.ts`): every answer allows them and `OPTIONS` is the preflight. */
  cors?: CorsPolicy;
}

/**
 * One endpoint. `path` is relative to the base path unless `absolute` (where `{basePath}` may mark the base path);
 * `{accountId}` marks the account segment.
 */
export interface RouteDefinition extends EdgeEntry {
  methods: readonly string[];
  path: string;
  absolute?: boolean;
  handler: RouteHandler;
  /** `false` keeps the route out of spans and request metrics (health probes would drown the real traffic). */
  observed?: boolean;
}

/** A compiled route. */
export interface Route extends RouteDefinition {
  pattern: RegExp;
  /** Whether the path has a `{clientId}` segment (captured after the account segment). */
  hasClientId?: boolean;
}

/** The outcome of matching a request. */
export type Match =
  | { route: Route; params: RouteParams; allowed: true }
  | { route: Route; params: RouteParams; allowed: false; allow: string };

function compile(definition: RouteDefinition, basePath: string): Route {
  // Absolute paths may still name the base path (RFC 8414 §3.1 inserts the well-known segment before it).
  const full = definition.absolute === true ? definition.path.replace('{basePath}', basePath) : `${basePath}${definition.path}`;
  const source = full
    .split(/(\{accountId\}|\{clientId\})/)
    .map((piece) => (piece === '{accountId}' || piece === '{clientId}' ? '([^/]+)' : piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return { ...definition, pattern: new RegExp(`^${source}$`), hasClientId: full.includes('{clientId}') };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Builds a matcher over the route table. */
export function createRouter(definitions: readonly RouteDefinition[], basePath: string): (request: SentinelRequest) => Match | null {
  const routes = definitions.map((definition) => compile(definition, basePath));
  const ownPrefix = `${basePath}/`;
  return (request) => {
    const { path } = request;
    if (!path.startsWith(ownPrefix) && !path.startsWith('/.well-known/')) return null;
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    for (const route of routes) {
      const found = route.pattern.exec(path);
      if (found === null) continue;
      const params: RouteParams = { accountId: decodeSegment(found[1] ?? '') };
      if (route.hasClientId === true) params.clientId = decodeSegment(found[2] ?? '');
      if (route.methods.includes(method)) return { route, params, allowed: true };
      const allow = [
        ...route.methods,
        ...(route.methods.includes('GET') ? ['HEAD'] : []),
        ...(route.cors === undefined ? [] : ['OPTIONS']),
      ];
      return { route, params, allowed: false, allow: allow.join(', ') };
    }
    return null;
  };
}
