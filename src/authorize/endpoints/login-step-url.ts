/**
 * URLs of the login page's further steps (TOTP code, passkey sign-in, adding a passkey): path-absolute like the
 * login page itself, under it, carrying only the interaction id.
 */
import type { SentinelContext } from '../../http/context.js';
import { type RouteName, routePath } from '../../http/route-paths.js';

/** The steps under the login page. */
export type LoginStep = 'totp' | 'passkey' | 'passkey/options' | 'passkey/register' | 'passkey/register/options';

const STEP_ROUTES: Readonly<Record<LoginStep, RouteName>> = {
  totp: 'login-totp',
  passkey: 'login-passkey',
  'passkey/options': 'login-passkey-options',
  'passkey/register': 'login-passkey-register',
  'passkey/register/options': 'login-passkey-register-options',
};

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
  return `${mountPath ?? ''}${routePath(context.config, STEP_ROUTES[step], { accountId })}?interaction=${encodeURIComponent(interactionId)}`;
}
