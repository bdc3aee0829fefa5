/**
 * Turns audit events into the token and login metrics, so the counters and the audit log can never disagree: both
 * come from the same event.
 */
import type { Attributes } from '@opentelemetry/api';
import type { SentinelEvent } from '../events.js';
import { ATTR, instruments } from './instruments.js';

/** What an event tells the request's span (set by {@link recordEventMetrics}). */
export interface EventAnnotations {
  clientId?: string | undefined;
  grantType?: string | undefined;
}

function identified(attributes: Attributes, event: SentinelEvent, identifiers: boolean): Attributes {
  if (!identifiers) return attributes;
  const withIds: Attributes = { ...attributes, [ATTR.accountId]: event.accountId };
  if (event.clientId !== undefined) withIds[ATTR.clientId] = event.clientId;
  return withIds;
}

const LOGIN_OUTCOMES: Partial<Record<SentinelEvent['type'], string>> = {
  'login.succeeded': 'success',
  'login.failed': 'failure',
  'login.throttled': 'throttled',
};

/**
 * Counts `sentinel.tokens.issued`, `sentinel.tokens.denied` and `sentinel.logins` for one event and returns what the
 * request span should carry. Account and client ids become metric attributes only with `identifiers` (cardinality).
 *
 * @example
 * recordEventMetrics({ type: 'token.issued', grantType: 'client_credentials', … }, false) // tokens.issued +1
 */
export function recordEventMetrics(event: SentinelEvent, identifiers: boolean): EventAnnotations {
  const meters = instruments();
  let grantType: string | undefined;
  if (event.type === 'token.issued') {
    grantType = event.grantType;
    meters.tokensIssued.add(1, identified({ [ATTR.grantType]: event.grantType }, event, identifiers));
  } else if (event.type === 'token.denied') {
    grantType = event.grantType;
    meters.tokensDenied.add(1, identified({ [ATTR.error]: event.error }, event, identifiers));
  } else {
    const outcome = LOGIN_OUTCOMES[event.type];
    if (outcome !== undefined) meters.logins.add(1, identified({ [ATTR.outcome]: outcome }, event, identifiers));
  }
  return { clientId: event.clientId, grantType };
}
