/**
 * The one place an audit event is built. Every event, whatever emitted it, gets the same fields the same way: type,
 * time, account, client, client address (through {@link clientIP}, so `trustProxy` applies to token events exactly as
 * to login events), request id and outcome.
 */
import { clientIP } from '../http/client-ip.js';
import type { ResolvedConfig } from '../config.js';
import type { EventInput, SentinelEvent, SentinelEventType } from './sentinel-event.js';
import { escapeEventFields } from './event-fields.js';
import type { SentinelRequest } from '../http/messages.js';

/** Events that record a refusal; the rest record something the service did. */
const FAILURES: ReadonlySet<SentinelEventType> = new Set<SentinelEventType>([
  'token.denied',
  'authorize.denied',
  'code.replayed',
  'refresh.reused',
  'login.failed',
  'login.throttled',
  'registration.denied',
  'registration.throttled',
  // A logout token the app never took (refused, or every attempt failed).
  'logout.failed',
  // The operator console's refusals.
  'console.denied',
  // The person refused a device on the verification page (RFC 8628), as authorize.denied records a cancelled sign-in.
  'device.denied',
  'account.denied',
]);

/**
 * Whether an event type records a refusal (`failure`) or a completed action (`success`).
 * @example outcomeOf('login.throttled') // 'failure'
 */
export function outcomeOf(type: SentinelEventType): 'success' | 'failure' {
  return FAILURES.has(type) ? 'failure' : 'success';
}

/** Where an event happened: the request behind it (absent for `completeLogin()`, which has none) and its id. */
export interface AuditSource {
  config: Pick<ResolvedConfig, 'trustProxy'>;
  request?: SentinelRequest | undefined;
  requestId?: string | undefined;
}

/**
 * Completes an emitter's event with the fields every event carries.
 *
 * @example
 * auditEvent({ type: 'token.revoked', accountId, clientId, tokenType: 'refresh_token' }, { config, request, requestId })
 * // → { type, accountId, clientId, tokenType, at, ip, requestId, outcome: 'success' }
 */
export function auditEvent(input: EventInput, source: AuditSource): SentinelEvent {
  const ip = source.request === undefined ? null : clientIP(source.config, source.request);
  // Fields carry decoded request values (path segments, client ids): escaped so that no one can forge log lines.
  return escapeEventFields({
    ...input,
    at: Date.now(),
    ip: ip ?? undefined,
    requestId: source.requestId,
    outcome: outcomeOf(input.type),
  }) as SentinelEvent;
}
