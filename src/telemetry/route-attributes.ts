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
