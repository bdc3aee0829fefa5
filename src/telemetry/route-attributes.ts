/**
 * The metric attribute sets of the request metrics, built once per route and status and shared (frozen): a request
 * records with an existing object instead of building two. Routes come from the route table and statuses from the
 * handlers, so both maps stay small.
 */
import type { Attributes } from '@opentelemetry/api';
import { ATTR } from './instruments.js';

const byRoute = new Map<string, Attributes>();
const byRouteAndStatus = new Map<string, Map<number, Attributes>>();

/**
 * `{ 'sentinel.route': route }`, the same object every time for a route.
 * @example meters.requestDuration.record(seconds, routeAttributes('token'));
 */
export function routeAttributes(route: string): Attributes {
  let attributes = byRoute.get(route);
  if (attributes === undefined) {
    attributes = Object.freeze({ [ATTR.route]: route });
    byRoute.set(route, attributes);
  }
  return attributes;
}

/**
 * `{ 'sentinel.route': route, 'http.response.status_code': status }`, the same object every time for the pair.
 * @example meters.requests.add(1, requestAttributes('token', 200));
 */
export function requestAttributes(route: string, status: number): Attributes {
  let byStatus = byRouteAndStatus.get(route);
  if (byStatus === undefined) {
    byStatus = new Map();
    byRouteAndStatus.set(route, byStatus);
  }
  let attributes = byStatus.get(status);
  if (attributes === undefined) {
    attributes = Object.freeze({ [ATTR.route]: route, [ATTR.status]: status });
    byStatus.set(status, attributes);
  }
  return attributes;
}

/** The methods OpenTelemetry's HTTP conventions name; any other is recorded as `_OTHER` (bounded cardinality). */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
const serverAttributeSets = new Map<string, Attributes>();

/**
 * The attributes of a request span of kind `SERVER` (no host HTTP instrumentation made one): the route, and the
 * `http.request.method` and `http.route` the HTTP semantic conventions require of a server span. The route is the
 * path template, never the path itself: no account id, and no query (which carries codes and `state`). The same
 * object every time for a route and method.
 *
 * @example tracer().startSpan('sentinel token', { kind: SpanKind.SERVER, attributes: serverAttributes('token', route.template, 'POST') });
 */
export function serverAttributes(route: string, template: string, method: string): Attributes {
  const known = KNOWN_METHODS.has(method) ? method : '_OTHER';
  const key = `${known} ${route}`;
  let attributes = serverAttributeSets.get(key);
  if (attributes === undefined) {
    attributes = Object.freeze({ [ATTR.route]: route, 'http.request.method': known, 'http.route': template });
    serverAttributeSets.set(key, attributes);
  }
  return attributes;
}
