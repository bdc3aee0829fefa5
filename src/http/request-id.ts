/**
 * The request id that ties audit events, spans and host logs together.
 *
 * A W3C `traceparent` header (Trace Context §3.2) names the trace the caller's span belongs to, which is also the
 * trace of the service's span when the host propagates context; a host or proxy that logs by `X-Request-Id` gets
 * that id instead. Both are attacker-chosen text, so only their well-formed shapes are taken.
 */
import { headerValue, type SentinelRequest } from './messages.js';

/**
 * A `traceparent` as Trace Context §3.2 (and OpenTelemetry's W3C propagator) reads it: lowercase hex only, and only a
 * version after `00` may carry more fields. A header the propagator ignores starts a trace of its own, so an id
 * read leniently from it (an uppercase one, lowercased) tied the events to a trace that was never recorded.
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(-.*)?$/;
const INVALID_TRACE_ID = '0'.repeat(32);
const INVALID_PARENT_ID = '0'.repeat(16);
const REQUEST_ID = /^[A-Za-z0-9._:@+=-]{1,128}$/;

/**
 * The caller's request id: the trace id of a valid `traceparent`, else a well-formed `X-Request-Id`, else `fallback`
 * (the service's own span's trace id when a tracer records it).
 *
 * @example
 * requestId({ method: 'GET', path: '/', query: new URLSearchParams(), headers: { 'x-request-id': 'req-42' } }) // 'req-42'
 */
export function requestId(request: SentinelRequest, fallback?: string): string | undefined {
  const traceId = traceIdOf(headerValue(request, 'traceparent')?.trim());
  if (traceId !== undefined) return traceId;
  const given = headerValue(request, 'x-request-id')?.trim();
  if (given !== undefined && REQUEST_ID.test(given)) return given;
  return fallback;
}

/** The trace id of a valid `traceparent` (version `ff`, an all-zero id and extra fields on version `00` are not). */
function traceIdOf(header: string | undefined): string | undefined {
  const parsed = header === undefined ? null : TRACEPARENT.exec(header);
  if (parsed === null) return undefined;
  const [, version, traceId, parentId, extra] = parsed;
  if (version === 'ff' || (version === '00' && extra !== undefined)) return undefined;
  return traceId === INVALID_TRACE_ID || parentId === INVALID_PARENT_ID ? undefined : traceId;
}
