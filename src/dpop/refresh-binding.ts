/**
 * Refresh tokens and DPoP (RFC 9449 §5): a public client has no credential of its own, so its refresh token is
 * bound to the DPoP key of the request that obtained it and is usable only with a proof by that key. Confidential
 * clients authenticate on every refresh; their refresh tokens stay unbound and each refresh may bind anew.
 */
import type { App } from '../apps/app.js';
import type { GrantRefreshState } from '../token/grant-records.js';
import { invalidProof } from './proof.js';

/**
 * The key a new grant's refresh token is bound to, or `undefined` for an unbound one.
 * @example nextRefreshGeneration(context, grantId, { gen: 0, family, absoluteExpiresAt, jkt: refreshBindingKey(app, jkt) })
 */
export function refreshBindingKey(app: App, jkt: string | undefined): string | undefined {
  return app.tokenEndpointAuthMethod === 'none' ? jkt : undefined;
}

/**
 * Refuses a bound refresh token presented without a proof by its key; checked before the token is taken, so a
 * thief without the key cannot even burn it.
 * @throws OAuthError invalid_dpop_proof
 * @example assertRefreshBinding(found.grant.refresh ?? {}, dpopJkt);
 */
export function assertRefreshBinding(record: Pick<GrantRefreshState, 'jkt'>, jkt: string | undefined): void {
  if (record.jkt === undefined) return;
  if (jkt === undefined) throw invalidProof('this refresh token is DPoP-bound: send a DPoP proof by its key');
  if (jkt !== record.jkt) throw invalidProof('the DPoP proof is signed by another key than the refresh token is bound to');
}
