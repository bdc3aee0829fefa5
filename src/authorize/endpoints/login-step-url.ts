/**
 * URLs of the login page's further steps (TOTP code, passkey sign-in, adding a passkey): path-absolute like the
 * login page itself, under it, carrying only the interaction id.
 */
import type { SentinelContext } from '../../context.js';

/** The steps under the login page. */
export type LoginStep = 'totp' | 'passkey' | 'passkey/options' | 'passkey/register' | 'passkey/register/options';

/**
 * The URL of a step of an interaction.
 *
 * @example
 * loginStepURL(context, '', '123456', interactionId, 'totp') // '/sentinel/api/account/123456/login/totp?interaction=…'
 */
export function loginStepURL(
  context: SentinelContext,
  mountPath: string | undefined,
  accountId: string,
  interactionId: string,
  step: LoginStep,
): string {
  return `${mountPath ?? ''}${context.config.basePath}/api/account/${encodeURIComponent(accountId)}/login/${step}?interaction=${encodeURIComponent(interactionId)}`;
}
