/**
 * External login (`login.url`): the host signs the user in on its own page, then hands the interaction back
 * with `sentinel.completeLogin(interactionId, { userId })` and sends the browser where the answer says.
 */
import type { SentinelContext } from '../../http/context.js';
import { OAuthError } from '../../errors.js';
import type { SentinelResponse } from '../../http/messages.js';
import { signedInResponse } from './signed-in-response.js';
import { restoringInteraction, takeInteraction } from '../state/interaction.js';
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
  /**
   * The account the host signed the user into. When given, it must be the interaction's: a host whose user ids are
   * per account then cannot finish one account's sign-in with a user of another.
   */
  accountId?: string | undefined;
}

/** How far in the future a host's `authTime` may lie (clock skew between hosts), in seconds. */
const AUTH_TIME_SKEW_SECONDS = 60;

function checkAuthTime(authTime: unknown): void {
  if (authTime === undefined) return;
  // A string, NaN or a time in milliseconds would be stored as the session's and the tokens' auth_time: a session
  // index that no longer parses, or a max_age that never asks again.
  if (typeof authTime !== 'number' || !Number.isSafeInteger(authTime) || authTime < 0) {
    throw new TypeError('sentinel-idp: completeLogin() authTime must be whole seconds since the epoch');
  }
  if (authTime > Math.floor(Date.now() / 1000) + AUTH_TIME_SKEW_SECONDS) {
    throw new TypeError('sentinel-idp: completeLogin() authTime lies in the future (seconds since the epoch, not milliseconds)');
  }
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
  checkAuthTime(input.authTime);
  if (input.accountId !== undefined && typeof input.accountId !== 'string') {
    throw new TypeError('sentinel-idp: completeLogin() accountId must be a string');
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
  if (input.accountId !== undefined && input.accountId !== accountId) {
    // The interaction is spent: the browser starts again, and no one is signed in to an account the host did not mean.
    throw new OAuthError('invalid_request', 'This sign-in was for another account. Go back to the application and start again.');
  }
  const previousSessionDigest = typeof interaction.sessionDigest === 'string' ? interaction.sessionDigest : undefined;
  // A failure from here on (a store write, a vetoing onEvent) puts the interaction back: the host may retry.
  return restoringInteraction(context, interactionId, interaction, async () => {
    context.emit({ type: 'login.succeeded', accountId, clientId, userId: input.userId, ...assuranceClaims(amr) });
    return signedInResponse(context, interaction, { userId: input.userId, authTime: input.authTime, amr, previousSessionDigest });
  });
}
