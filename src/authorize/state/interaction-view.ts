/**
 * What a host's own login page (`login.url`) may read of an open interaction: the requirements its sign-in must
 * meet for `completeLogin()` to accept it (OpenID Connect Core §3.1.2.1), and nothing that lets the page change
 * the request (redirect URI, `state`, PKCE challenge stay on the server).
 */
import type { SentinelContext } from '../../http/context.js';
import type { AcrValue } from '../../assurance/levels.js';
import type { PromptValue } from '../request/oidc-params.js';
import { findInteraction } from './interaction.js';

/**
 * An open interaction as `sentinel.interaction(id)` shows it. A sign-in made at or after `createdAt` always meets
 * `prompt` and `maxAge`; an earlier one (the host's existing sign-in) is refused with `login_required` under
 * `prompt=login`, or when it is `maxAge` seconds old or older by the time `completeLogin()` runs.
 *
 * @example
 * const view: InteractionView = { accountId: '123456', clientId: 'c-1', createdAt: 1767225600, prompt: ['login'], maxAge: 300, subject: 'u-1' };
 */
export interface InteractionView {
  accountId: string;
  /** The application the sign-in is for (a device flow's app too). */
  clientId: string;
  /** Seconds since the epoch when the request arrived (compare with your sign-in's `authTime`). */
  createdAt: number;
  /**
   * `prompt` values of the request; `login` asks for a sign-in made after `createdAt`. The service adds `login` for a
   * client a session does not answer by itself (a native app, RFC 8252 §8.6; a client named by its metadata document).
   */
  prompt?: PromptValue[] | undefined;
  /** `max_age` in seconds: an earlier sign-in must be younger than this. */
  maxAge?: number | undefined;
  /** The level the sign-in must reach (`acr_values`, the `claims` parameter's `acr`); pass the `amr` that reaches it. */
  acr?: AcrValue | undefined;
  /** `login_hint`, to pre-fill your username field. */
  loginHint?: string | undefined;
  /**
   * The user the request names (the `sub` of its `id_token_hint`, or of its `claims` parameter's `id_token.sub`):
   * `completeLogin()` for any other `userId` answers `login_required` and issues nothing, so ask for this user.
   */
  subject?: string | undefined;
  /** `ui_locales`, most preferred first. */
  uiLocales?: string[] | undefined;
}

/**
 * The requirements of an open interaction, or `null` when it is unknown, expired or already completed. Reading
 * does not use it up.
 *
 * @example
 * const view = await interactionView(context, interactionId);
 */
export async function interactionView(context: SentinelContext, interactionId: string): Promise<InteractionView | null> {
  const record = typeof interactionId === 'string' ? await findInteraction(context, interactionId) : null;
  if (record === null) return null;
  const { accountId, clientId, prompt, maxAge, acr, loginHint, uiLocales, idTokenHintSubject, claimsSubject } = record.request;
  const view: InteractionView = { accountId, clientId, createdAt: Math.floor(record.createdAt / 1000) };
  // Copies, and only the members the request has: the view is the host's to keep, never the stored record.
  if (prompt !== undefined) view.prompt = [...prompt];
  if (maxAge !== undefined) view.maxAge = maxAge;
  if (acr !== undefined) view.acr = acr;
  if (loginHint !== undefined) view.loginHint = loginHint;
  const subject = idTokenHintSubject ?? claimsSubject;
  if (subject !== undefined) view.subject = subject;
  if (uiLocales !== undefined) view.uiLocales = [...uiLocales];
  return view;
}
