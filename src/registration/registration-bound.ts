/**
 * A per-address bound on successful dynamic client registrations (RFC 7591 §3). The initial access token decides who
 * may register, not how much: one token often serves every account, and an app that registers itself on each install
 * carries it, so whoever holds it could create apps without end, each a permanent record in the AppStore (and a row,
 * a change-log entry and a notification on PostgreSQL). Keycloak bounds its anonymous registrations by policy; here
 * valid registrations count against their client address, `registration.registrationsPerAddress` per hour, and from
 * IPv6 against their /48 too (`registration.registrationsPerNetwork`), through the shared per-address bound of
 * `http/address-bound.ts`: atomic across instances, failing closed (a Store that fails is a `500`, a counter
 * MemoryStore has no room for refuses as throttled), the /48 taken first so a refused network creates no /64
 * counter. Only a registration about to be saved counts: a wrong token is the token throttle's, bad metadata costs
 * nothing. The counters live under `throttle-registered:`, a MemoryStore security area of their own: only holders of
 * an initial access token create them, one per address that registered an app, but from many addresses they must
 * still never fill the login throttle's `throttle:`.
 */
import { createHash } from 'node:crypto';
import { addressBoundKey, addressBoundNetworkKey, takeNetworkedSlot } from '../http/address-bound.js';
import type { SentinelContext } from '../http/context.js';
import { auditsAccount } from '../http/denied-accounts.js';
import { OAuthError } from '../errors.js';
import { registrationOptions } from './access.js';

/**
 * The counters' key prefix (`REGISTERED_THROTTLE_PREFIX` of src/stores/memory.ts): `throttle-registered:ip:`*ip* and
 * `throttle-registered:net:`*IPv6 /48*.
 */
const PREFIX = 'throttle-registered';

/** The bound's window: registrations are counted per hour (a fixed window started by the first one). */
export const REGISTRATION_WINDOW_SECONDS = 3600;

/**
 * Counts one registration from `ip` against `registration.registrationsPerAddress` (and, from IPv6, its /48 against
 * `registrationsPerNetwork`), before the app is saved.
 * @throws OAuthError temporarily_unavailable (429, `Retry-After`) when the address or its network has registered
 *   its share this hour, with a `registration.throttled` event when the AppStore knows `accountId`.
 * @example await takeRegistrationSlot(context, clientIP(context.config, request), accountId);
 */
export async function takeRegistrationSlot(context: SentinelContext, ip: string | null, accountId: string): Promise<void> {
  const { registrationsPerAddress, registrationsPerNetwork } = registrationOptions(context);
  const networkKey = addressBoundNetworkKey(PREFIX, ip);
  const refusedBy = await takeNetworkedSlot(
    context,
    { key: addressBoundKey(PREFIX, ip), limit: registrationsPerAddress },
    networkKey === null ? null : { key: networkKey, limit: registrationsPerNetwork },
    REGISTRATION_WINDOW_SECONDS,
  );
  if (refusedBy === null) return;
  // The route has no denied event of its own (registration refusals are registration.* events): this is its audit,
  // for accounts that exist. Past the bound every registration from the address is refused here whatever account its
  // path names, so an event each for made-up accounts (which nobody can read) would grow the audit log without bound,
  // as the token throttle's would (token-throttle.ts); the registrations that used the bound up were each audited.
  if (await auditsAccount(context, accountId, 'registration')) {
    context.emit({ type: 'registration.throttled', accountId, scope: 'registrations' });
  }
  throw new OAuthError('temporarily_unavailable', `too many registrations from this ${refusedBy}; retry later`, {
    status: 429,
    headers: { 'retry-after': String(REGISTRATION_WINDOW_SECONDS) },
  });
}

/**
 * Changes one registered client may make to its registration per hour, across instances: RFC 7592 updates and new
 * secrets together. Each is a write that lasts (on PostgreSQL a change-log row, which is append-only, and a
 * notification to every instance) plus an `app.*` audit event, and the registration access token that asks for it is
 * held by the client, sometimes by every install of an app: unbounded, one client could grow the registry's history
 * and the audit log without end. A client that changes its registration by hand or from a deployment script stays
 * well under it.
 */
export const CHANGES_PER_CLIENT = 100;

/**
 * Counts one change to the registration of `clientId` against {@link CHANGES_PER_CLIENT}, before it is written. The
 * counter lives beside the registrations' (`throttle-registered:client:`*digest of account and client*), so a
 * MemoryStore keeps it as security state, one per client that changed its registration this hour.
 * @throws OAuthError temporarily_unavailable (429, `Retry-After`) with a `registration.throttled` event when the
 *   client has made its share of changes this hour.
 * @example await takeChangeSlot(context, app.accountId, app.clientId); // then write the change
 */
export async function takeChangeSlot(context: SentinelContext, accountId: string, clientId: string): Promise<void> {
  const digest = createHash('sha256').update(`${accountId}\u0000${clientId}`).digest('base64url');
  const refusedBy = await takeNetworkedSlot(
    context,
    { key: `${PREFIX}:client:${digest}`, limit: CHANGES_PER_CLIENT },
    null,
    REGISTRATION_WINDOW_SECONDS,
  );
  if (refusedBy === null) return;
  context.emit({ type: 'registration.throttled', accountId, clientId, scope: 'registrations' });
  throw new OAuthError('temporarily_unavailable', 'too many changes to this registration; retry later', {
    status: 429,
    headers: { 'retry-after': String(REGISTRATION_WINDOW_SECONDS) },
  });
}
