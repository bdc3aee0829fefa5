/**
 * A device-flow grant in its user's session index (src/sessions/session-index.ts). The device signed in through no
 * browser session of its own, so it gets an index entry of its own, named by its grant: the device is listed among
 * the user's sessions and its app among the connected apps, "sign out everywhere", "end this session" and
 * "disconnect this app" end its grant, its ID tokens carry the entry's `sid`, and ending it sends the app a logout
 * token. It does not join the session of the browser that approved it: signing out on the phone that approved a TV
 * does not disconnect the TV.
 */
import type { SentinelContext } from '../http/context.js';
import { digest } from '../lib/random-secrets.js';
import { changeUserIndex, type IndexedSession, sessionSid } from '../sessions/session-index.js';
import { type GrantRecord, grantIndexUntil, revokeGrant } from '../token/grant-records.js';

/** The entry's stand-in for a session digest: derived from the grant id, so a retried write names the same entry. */
function deviceSessionDigest(grantId: string): string {
  return digest(`device-grant\n${grantId}`);
}

/**
 * The `sid` of a device grant's own index entry, for its ID tokens and its logout token.
 *
 * @example const sid = deviceSid('123456', 'u-1', grantId);
 */
export function deviceSid(accountId: string, userId: string, grantId: string): string {
  return sessionSid(accountId, userId, deviceSessionDigest(grantId));
}

/**
 * Lists a device grant just created in its user's index, as an entry of its own whose session has already ended
 * (there is no session record): it stays listed while the grant can live. When the index cannot be written the
 * grant is revoked and the error goes on (a 500, fail closed): its tokens were signed but are never sent, and no
 * grant lives where ending the user's sessions would miss it.
 *
 * @example await indexDeviceGrant(context, grantId, grant);
 */
export async function indexDeviceGrant(context: SentinelContext, grantId: string, grant: GrantRecord): Promise<void> {
  const sessionDigest = deviceSessionDigest(grantId);
  const entry: IndexedSession = {
    sessionDigest,
    authTime: grant.authTime,
    sessionEnd: grant.authTime,
    grants: [{ clientId: grant.clientId, grantId, until: grantIndexUntil(context, grant) }],
  };
  try {
    await changeUserIndex(context, grant.accountId, grant.userId, (sessions) => [
      ...sessions.filter((session) => session.sessionDigest !== sessionDigest),
      entry,
    ]);
  } catch (error) {
    await revokeGrant(context, grantId).catch(() => undefined);
    throw error;
  }
}
