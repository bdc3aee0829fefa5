/**
 * Turns audit events into the token and login metrics, so the counters and the audit log can never disagree: both
 * come from the same emitted event.
 */
import type { Attributes } from '@opentelemetry/api';
import type { EventInput } from '../events.js';
import { ATTR, instruments } from './instruments.js';

/** Attribute sets without identifiers, built once per key and value (grant types, error codes, outcomes). */
const SHARED = new Map<string, Attributes>();
const MAX_SHARED = 256;

function attributesOf(key: string, value: string, event: EventInput, identifiers: boolean): Attributes {
  if (identifiers) {
    const withIds: Attributes = { [key]: value, [ATTR.accountId]: event.accountId };
    if (event.clientId !== undefined) withIds[ATTR.clientId] = event.clientId;
    return withIds;
  }
  const cacheKey = `${key}=${value}`;
  let attributes = SHARED.get(cacheKey);
  if (attributes === undefined) {
    attributes = Object.freeze({ [key]: value });
    // Values come from the service's own vocabularies, but the cap keeps the map bounded whatever a hook emits.
    if (SHARED.size < MAX_SHARED) SHARED.set(cacheKey, attributes);
  }
  return attributes;
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
    meters.tokensIssued.add(1, attributesOf(ATTR.grantType, event.grantType, event, identifiers));
  } else if (event.type === 'token.denied') {
    meters.tokensDenied.add(1, attributesOf(ATTR.error, event.error, event, identifiers));
  } else {
    const outcome = LOGIN_OUTCOMES[event.type];
    if (outcome !== undefined) meters.logins.add(1, attributesOf(ATTR.outcome, outcome, event, identifiers));
  }
}
