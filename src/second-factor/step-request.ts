/**
 * The checks every step after the password makes before anything else, in the login form's order: the
 * interaction and its pending step exist (for this account) and the request comes from the browser that passed the
 * password, then for a POST: not cross-site, and the step's own
 * CSRF token, compared in constant time. A forged or stale post changes nothing.
 */
import { readForm } from '../http/form-body.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import type { SentinelRequest } from '../http/messages.js';
import { fromSearchParams, single, type ParamMap } from '../http/params.js';
import { constantTimeEqual } from '../lib/random-secrets.js';
import { findInteraction, type InteractionRecord } from '../authorize/state/interaction.js';
import { isCrossSiteRequest } from '../authorize/endpoints/cross-site.js';
import { noteSignInLocales } from '../i18n/page-locale.js';
import { expiredSignIn } from './continue-sign-in.js';
import { findPending, type PendingSignIn, type PendingStage } from './pending-sign-in.js';
import { fromTiedBrowser, stepTieRemoval } from './step-cookie.js';

/** A step request that passed the checks. */
export interface StepRequest {
  interactionId: string;
  interaction: InteractionRecord;
  pending: PendingSignIn;
  /** The posted form (empty for GET). */
  form: ParamMap;
}

/**
 * Loads and checks a step request.
 *
 * @example
 * const step = await readStepRequest(context, request, accountId, 'totp');
 */
export async function readStepRequest(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  stage: PendingStage,
): Promise<StepRequest> {
  const interactionId = single(fromSearchParams(request.query), 'interaction');
  if (interactionId === undefined) throw expiredSignIn();
  const interaction = await findInteraction(context, interactionId);
  // The sign-in is over (signed in, cancelled, expired): its step cookie, if this browser holds it, goes too.
  if (interaction === null) throw expiredSignIn(stepTieRemoval(context, request, interactionId, request.mountPath));
  if (interaction.request.accountId !== accountId) throw expiredSignIn();
  // Whatever the step ends in, an out-of-date form or a 429 included, is shown in the sign-in's language.
  noteSignInLocales(request, interaction.request.uiLocales);
  const pending = await findPending(context, interactionId, stage);
  // Another browser gets the answer a gone link gets, before the page (and its CSRF token) is rendered.
  if (pending === null || !fromTiedBrowser(context, request, interactionId, pending.browser)) throw expiredSignIn();
  if (request.method !== 'POST') return { interactionId, interaction, pending, form: new Map() };
  if (isCrossSiteRequest(context, request, [])) {
    throw new OAuthError('invalid_request', 'The sign-in form was posted from another site.', { status: 403 });
  }
  const form = await readForm(request, context.config.bodyLimit);
  const csrfToken = single(form, 'csrf_token');
  if (csrfToken === undefined || !constantTimeEqual(csrfToken, pending.csrfToken)) {
    throw new OAuthError('invalid_request', 'The sign-in form is out of date. Go back to the application and start again.', {
      status: 403,
    });
  }
  return { interactionId, interaction, pending, form };
}
