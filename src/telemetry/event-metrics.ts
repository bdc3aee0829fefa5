/**
 * Turns audit events into the token and login metrics, so the counters and the audit log can never disagree: both
 * come from the same emitted event.
 */
import type { Attributes } from '@opentelemetry/api';
import type { EventInput } from '../events/sentinel-event.js';
import { ATTR, instruments, UNKNOWN_ACCOUNT } from './instruments.js';
import type { RequestObservation } from './request-observation.js';
import type { Tally } from './tally.js';

/** Attribute sets without identifiers, built once per key and value (grant types, error codes, outcomes). */
const SHARED = new Map<string, Map<string, Attributes>>();
const MAX_SHARED = 256;

function shared(key: string, value: string): Attributes {
  let byValue = SHARED.get(key);
  if (byValue === undefined) {
    byValue = new Map();
    SHARED.set(key, byValue);
  }
  let attributes = byValue.get(value);
  if (attributes === undefined) {
    attributes = Object.freeze({ [key]: value });
    // Values come from the service's own vocabularies, but the cap keeps the map bounded whatever a hook emits.
    if (byValue.size < MAX_SHARED) byValue.set(value, attributes);
  }
  return attributes;
}

function count(tally: Tally, key: string, value: string, event: EventInput, identifiers: boolean, observation?: RequestObservation): void {
  if (identifiers) {
    // An event of a request names the path's account, which the caller chose (a refusal of a made-up account says
    // so): its id only once the request learnt that the account exists. Events of no request (completeLogin, the
    // workers) name accounts read from the service's own records.
    const known = observation === undefined || observation.knowsAccount(event.accountId);
    const accountId = known ? event.accountId : UNKNOWN_ACCOUNT;
    const clientId = known ? event.clientId : undefined;
    tally.addKeyed(JSON.stringify([value, accountId, clientId]), () => {
      const withIds: Attributes = { [key]: value, [ATTR.accountId]: accountId };
      if (clientId !== undefined) withIds[ATTR.clientId] = clientId;
      return withIds;
    });
    return;
  }
  tally.add(shared(key, value));
}

const LOGIN_OUTCOMES: Partial<Record<EventInput['type'], string>> = {
  'login.succeeded': 'success',
  'login.failed': 'failure',
  'login.throttled': 'throttled',
};

/**
 * Counts `sentinel.tokens.issued`, `sentinel.tokens.denied` and `sentinel.logins` for one event. Account and client
 * ids become metric attributes only with `identifiers` (cardinality), and within a request only once its
 * `observation` knows the account exists.
 *
 * @example
 * recordEventMetrics({ type: 'token.issued', grantType: 'client_credentials', … }, false) // tokens.issued +1
 */
export function recordEventMetrics(event: EventInput, identifiers: boolean, observation?: RequestObservation): void {
  const meters = instruments();
  // An exchanged token is an issued token too: it counts under its grant type (RFC 8693 or RFC 7523).
  if (event.type === 'token.issued' || event.type === 'token.exchanged') {
    count(meters.tokensIssued, ATTR.grantType, event.grantType, event, identifiers, observation);
  } else if (event.type === 'token.denied') {
    count(meters.tokensDenied, ATTR.error, event.error, event, identifiers, observation);
  } else {
    const outcome = LOGIN_OUTCOMES[event.type];
    if (outcome !== undefined) count(meters.logins, ATTR.outcome, outcome, event, identifiers, observation);
  }
}
