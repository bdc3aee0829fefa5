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
  /**
   * `true` when the route's GET changes nothing (no store write, no event, no hook with an effect): a public
   * document or a probe. Only such routes answer `HEAD` as `GET`; on every other route a `HEAD` would run the GET
   * handler and its effects (issue a code, end a session, store an interaction) for an answer whose body is dropped,
   * so it is a `405` whose `Allow` omits it (RFC 9110 §9.3.2 lets a server refuse HEAD on a resource).
   */
  headAsGet?: boolean;
}

/** A compiled route. */
export interface Route extends RouteDefinition {
  pattern: RegExp;
  /** The full path template, base path included (`/sentinel/api/account/{accountId}/token`): the span's `http.route`. */
  template: string;
  /** Whether the path has a `{clientId}` segment (captured after the account segment). */
  hasClientId?: boolean;
  /** Whether the path has an `{accountId}` segment, whose value the edge checks before the handler runs. */
  hasAccountId?: boolean;
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
  return {
    ...definition,
    pattern: new RegExp(`^${source}$`),
    template: full,
    hasClientId: full.includes('{clientId}'),
    hasAccountId: full.includes('{accountId}'),
  };
}

function decodeSegment(segment: string): string {
  // Nearly every account id has no escape in it, and decodeURIComponent gives such a segment back unchanged: skipping
  // it spares every routed request a call into V8's runtime, which copies the segment byte by byte (bench/RESULTS.md).
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Where a route's path can be looked up instead of matched: a path without parameters is one exact string; a path
 * with only `{accountId}` is the literal text before it and after it (the segment itself has no `/`).
 */
type Shape = { kind: 'exact'; path: string } | { kind: 'account'; prefix: string; suffix: string } | { kind: 'pattern' };

function shapeOf(route: Route, basePath: string): Shape {
  const full = route.absolute === true ? route.path.replace('{basePath}', basePath) : `${basePath}${route.path}`;
  const pieces = full.split(/(\{accountId\}|\{clientId\})/);
  if (pieces.length === 1) return { kind: 'exact', path: full };
  if (pieces.length === 3 && pieces[1] === '{accountId}')
    return { kind: 'account', prefix: pieces[0] as string, suffix: pieces[2] as string };
  return { kind: 'pattern' };
}

/** Routes by where they sit in the table: the first one that matches a path wins, as in a scan of the table. */
interface Indexed {
  index: number;
  route: Route;
}

/**
 * Builds a matcher over the route table.
 *
 * The first route of the table whose path matches wins. Most paths are found by lookups, not by trying each
 * route's regular expression in turn: the table has some thirty routes and grows, and a scan ran a dozen
 * expressions before it reached the token endpoint (several µs per request, `bench/profile.ts`). Routes with a
 * `{clientId}` segment are still matched by expression; of every candidate the one earliest in the table is taken,
 * so the outcome is the scan's.
 */
export function createRouter(definitions: readonly RouteDefinition[], basePath: string): (request: SentinelRequest) => Match | null {
  const routes = definitions.map((definition) => compile(definition, basePath));
  const ownPrefix = `${basePath}/`;
  const exact = new Map<string, Indexed>();
  const byPrefix = new Map<string, Map<string, Indexed>>();
  const patterns: Indexed[] = [];
  routes.forEach((route, index) => {
    const shape = shapeOf(route, basePath);
    const entry = { index, route };
    if (shape.kind === 'pattern') {
      patterns.push(entry);
    } else if (shape.kind === 'exact') {
      if (!exact.has(shape.path)) exact.set(shape.path, entry);
    } else {
      let suffixes = byPrefix.get(shape.prefix);
      if (suffixes === undefined) {
        suffixes = new Map();
        byPrefix.set(shape.prefix, suffixes);
      }
      if (!suffixes.has(shape.suffix)) suffixes.set(shape.suffix, entry);
    }
  });
  const prefixes = [...byPrefix];

  function answer(route: Route, params: RouteParams, requested: string): Match {
    const headAsGet = route.headAsGet === true && route.methods.includes('GET');
    const method = requested === 'HEAD' && headAsGet ? 'GET' : requested;
    if (route.methods.includes(method)) return { route, params, allowed: true };
    const allow = [...route.methods, ...(headAsGet ? ['HEAD'] : []), ...(route.cors === undefined ? [] : ['OPTIONS'])];
    return { route, params, allowed: false, allow: allow.join(', ') };
  }

  return (request) => {
    const { path } = request;
    if (!path.startsWith(ownPrefix) && !path.startsWith('/.well-known/')) return null;
    const { method } = request;
    let best = exact.get(path);
    let account = '';
    for (const [prefix, suffixes] of prefixes) {
      if (!path.startsWith(prefix)) continue;
      const slash = path.indexOf('/', prefix.length);
      // The account segment is `[^/]+`: at least one character, up to the next slash.
      if (slash === prefix.length || path.length === prefix.length) continue;
      const found = suffixes.get(slash === -1 ? '' : path.slice(slash));
      if (found !== undefined && (best === undefined || found.index < best.index)) {
        best = found;
        account = slash === -1 ? path.slice(prefix.length) : path.slice(prefix.length, slash);
      }
    }
    for (const candidate of patterns) {
      if (best !== undefined && best.index < candidate.index) break;
      const found = candidate.route.pattern.exec(path);
      if (found === null) continue;
      const params: RouteParams = { accountId: decodeSegment(found[1] ?? '') };
      if (candidate.route.hasClientId === true) params.clientId = decodeSegment(found[2] ?? '');
      return answer(candidate.route, params, method);
    }
    if (best === undefined) return null;
    return answer(best.route, { accountId: decodeSegment(account) }, method);
  };
}
