/**
 * Turns audit events into the token and login metrics, so the counters and the audit log can never disagree: both
 * come from the same emitted event.
 */
import type { Attributes } from '@opentelemetry/api';
import type { EventInput } from '../events.js';
import { ATTR, instruments } from './instruments.js';

function identified(attributes: Attributes, event: EventInput, identifiers: boolean): Attributes {
  if (!identifiers) return attributes;
  const withIds: Attributes = { ...attributes, [ATTR.accountId]: event.accountId };
  if (event.clientId !== undefined) withIds[ATTR.clientId] = event.clientId;
  return withIds;
}

const LOGIN_OUTCOMES: Partial<Record<EventInput['type'], string>> = {
  'login.succeeded': 'success',
  'login.failed': 'failure',
  'login.throttled': 'throttled',
};

/**
 * Counts `sentinel.tokens.issued`, `sentinel.tokens.denied` and `sentinel.logins` for one event. Account and client
 * ids become metric attributes only with `identifiers` (cardinality).
 *
 * @example
 * recordEventMetrics({ type: 'token.issued', grantType: 'client_credentials', … }, false) // tokens.issued +1
 */
export function recordEventMetrics(event: EventInput, identifiers: boolean): void {
  const meters = instruments();
  if (event.type === 'token.issued') {
    meters.tokensIssued.add(1, identified({ [ATTR.grantType]: event.grantType }, event, identifiers));
  } else if (event.type === 'token.denied') {
    meters.tokensDenied.add(1, identified({ [ATTR.error]: event.error }, event, identifiers));
  } else {
    const outcome = LOGIN_OUTCOMES[event.type];
    if (outcome !== undefined) meters.logins.add(1, identified({ [ATTR.outcome]: outcome }, event, identifiers));
  }
}
