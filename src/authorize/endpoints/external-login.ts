/**
 * External login (`login.url`): the host signs the user in on its own page, then hands the interaction back
 * with `sentinel.completeLogin(interactionId, { userId })` and sends the browser where the answer says.
 */
import type { SentinelContext } from '../../http/context.js';
import { OAuthError } from '../../errors.js';
import type { SentinelResponse } from '../../http/messages.js';
import { signedInResponse } from './signed-in-response.js';
import { takeInteraction } from '../state/interaction.js';
import { assuranceClaims, readAmr } from '../../assurance/levels.js';

/**
 * The user the host signed in (platform-operations.md §5.2: the service authenticates the user, here through the host's page).
 *
 * @example
 * const input: CompleteLoginInput = { userId: user.id, authTime: Math.floor(user.signedInAt / 1000) };
 */
export interface CompleteLoginInput {
  /** Stable user id; becomes `sub` of the user's tokens. */
  userId: string;
  /** Seconds since the epoch when the user authenticated; now when omitted. */
  authTime?: number | undefined;
  /**
   * How the host authenticated the user (RFC 8176 values the service knows: `pwd`, `otp`, `hwk`, `swk`, `user`,
   * `mfa`); the session and the tokens carry it and the `acr` it adds up to. Without it the tokens carry neither, and
   * the sign-in meets no `acr_values` requirement.
   */
  amr?: string[] | undefined;
}

/**
 * Completes an interaction for `input.userId`: device session, code, and the 303 to the application.
 *
 * @example
 * const response = await completeExternalLogin(context, interactionId, { userId: 'u-1' });
 * @throws OAuthError invalid_request when the interaction is unknown, expired or already completed.
 */
export async function completeExternalLogin(
  context: SentinelContext,
  interactionId: string,
  input: CompleteLoginInput,
): Promise<SentinelResponse> {
  if (typeof input?.userId !== 'string' || input.userId === '' || input.userId.length > 256) {
    throw new TypeError('sentinel-idp: completeLogin() needs { userId } with a non-empty string id');
  }
  const amr = input.amr === undefined ? undefined : readAmr(input.amr);
  if (input.amr !== undefined && amr === undefined) {
    throw new TypeError('sentinel-idp: completeLogin() amr must be RFC 8176 values the service knows (pwd, otp, hwk, swk, user, mfa)');
  }
  const interaction = typeof interactionId === 'string' ? await takeInteraction(context, interactionId) : null;
  if (interaction === null) {
    throw new OAuthError('invalid_request', 'This sign-in link is invalid or has expired. Go back to the application and start again.');
  }
  const { accountId, clientId } = interaction.request;
  context.emit({ type: 'login.succeeded', accountId, clientId, userId: input.userId, ...assuranceClaims(amr) });
  return signedInResponse(context, interaction, { userId: input.userId, authTime: input.authTime, amr });
}
