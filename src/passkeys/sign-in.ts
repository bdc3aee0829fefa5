/**
 * Signing in with a passkey on the login page (WebAuthn §7.2):
 *
 * - `POST …/login/passkey/options?interaction=…` (`csrf_token`) → the request options, with a fresh challenge kept
 *   for this interaction. No `allowCredentials`: the passkey is discoverable, so no username is asked for and none
 *   is revealed.
 * - `POST …/login/passkey?interaction=…` (`csrf_token`, `assertion`) → on success the sign-in ends as a password
 *   sign-in does (session, code, 303). The user handle only says whose passkeys to look in (in this account); the
 *   signature over the challenge, origin and RP id by a key in that list is what signs in. A passkey answers for
 *   user verification and possession at once, so no TOTP step follows. `users.authenticate` is not asked, so
 *   `users.claims` is (when the host gives it): a user it says is gone (`null`), deleted or disabled, is refused.
 *
 * Each post takes a slot of the per-address passkey throttle first (sign-in-throttle.ts): past
 * `passkeys.maxFailuresPerIp` attempts that did not sign in, `429` before anything is asked of the host.
 *
 * Any failure (no challenge, another account's or user's credential, wrong origin or RP id, a prompt shown in a
 * frame of another origin, bad signature, a counter that went backwards, a counter another assertion moved since it
 * was read, a backup-eligibility flag other than the one the passkey was registered with, a user the claims hook
 * says is gone) answers the login page again with one message and a 400, and issues nothing.
 */
import { generateAuthenticationOptions, verifyAuthenticationResponse } from '@simplewebauthn/server';
import { readForm } from '../http/form-body.js';
import { clientIP } from '../http/client-ip.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { noStoreJSON, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import { fromSearchParams, single, type ParamMap } from '../http/params.js';
import { constantTimeEqual } from '../lib/random-secrets.js';
import { findInteraction, type InteractionRecord } from '../authorize/state/interaction.js';
import { loginPageResponse } from '../authorize/pages/login-response.js';
import { isCrossSiteRequest } from '../authorize/endpoints/cross-site.js';
import { assertLoginBrowser } from '../authorize/state/login-browser.js';
import { noteSignInLocales } from '../i18n/page-locale.js';
import { subjectThrottleKeys } from '../authorize/state/throttle.js';
import { completeSignIn, expiredSignIn } from '../second-factor/continue-sign-in.js';
import { CEREMONY_TIMEOUT_MS, newChallenge, takeChallenge } from './challenge.js';
import { framedCeremony, parseAssertion } from './credential-json.js';
import type { PasskeyHooks } from './hooks.js';
import { relyingParty } from './options.js';
import { reservePasskeyAttempt } from './sign-in-throttle.js';
import { readPasskeys } from './stored-passkeys.js';
import { userIdFromHandle } from './user-handle.js';
import { passkeyAmr } from '../assurance/levels.js';
import { loadUserClaims } from '../userinfo/claims.js';

/** The one message for every passkey failure. */
export const PASSKEY_FAILED = 'That passkey could not be used. Try again or sign in with your password.';

interface PasskeyRequest {
  interactionId: string;
  interaction: InteractionRecord;
  form: ParamMap;
  hooks: PasskeyHooks;
}

async function readPasskeyRequest(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<PasskeyRequest> {
  const hooks = context.config.users?.passkeys;
  if (hooks === undefined) throw new OAuthError('invalid_request', 'Passkeys are not enabled.', { status: 404 });
  const interactionId = single(fromSearchParams(request.query), 'interaction');
  const interaction = await findInteraction(context, interactionId);
  if (interactionId === undefined || interaction === null || interaction.request.accountId !== accountId) throw expiredSignIn();
  // Whatever the post ends in, an out-of-date form included, is shown in the sign-in's language.
  noteSignInLocales(request, interaction.request.uiLocales);
  if (isCrossSiteRequest(context, request, [])) {
    throw new OAuthError('invalid_request', 'The sign-in form was posted from another site.', { status: 403 });
  }
  const form = await readForm(request, context.config.bodyLimit);
  const csrfToken = single(form, 'csrf_token');
  if (csrfToken === undefined || !constantTimeEqual(csrfToken, interaction.csrfToken)) {
    throw new OAuthError('invalid_request', 'The sign-in form is out of date. Go back to the application and start again.', {
      status: 403,
    });
  }
  assertLoginBrowser(context, request, interaction);
  return { interactionId, interaction, form, hooks };
}

/**
 * Answers the request options of a passkey sign-in.
 *
 * @example
 * { name: 'login-passkey-options', methods: ['POST'], path: '/api/account/{accountId}/login/passkey/options', handler: (c, r, p) => handlePasskeyOptions(c, r, p.accountId) }
 */
export async function handlePasskeyOptions(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
): Promise<SentinelResponse> {
  const { interactionId } = await readPasskeyRequest(context, request, accountId);
  const challenge = await newChallenge(context, 'sign-in', interactionId);
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(context.config).rpId,
    challenge: Buffer.from(challenge, 'base64url'),
    userVerification: 'required',
    timeout: CEREMONY_TIMEOUT_MS,
  });
  return noStoreJSON(200, options);
}

/**
 * Verifies a passkey assertion and signs the user in.
 *
 * @example
 * { name: 'login-passkey', methods: ['POST'], path: '/api/account/{accountId}/login/passkey', handler: (c, r, p) => handlePasskeySignIn(c, r, p.accountId) }
 */
export async function handlePasskeySignIn(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
): Promise<SentinelResponse> {
  const { interactionId, interaction, form, hooks } = await readPasskeyRequest(context, request, accountId);
  const ip = clientIP(context.config, request);
  const assertion = parseAssertion(single(form, 'assertion'));
  const userId = userIdFromHandle(assertion?.response.userHandle);
  const { clientId } = interaction.request;
  const usernameDigest = async (): Promise<string> =>
    (await subjectThrottleKeys(context, 'passkey', accountId, userId ?? '', ip)).usernameDigest;
  // Before the challenge is taken and the host asked: a throttled attempt spends and asks nothing.
  const attempt = await reservePasskeyAttempt(context, ip, async () =>
    context.emit({ type: 'login.throttled', accountId, clientId, usernameDigest: await usernameDigest(), scope: 'ip' }),
  );
  // Taken whatever happens next: an assertion gets one try per challenge, so a captured one cannot be retried.
  const challenge = await takeChallenge(context, 'sign-in', interactionId);
  const refuse = async (reason: string): Promise<SentinelResponse> => {
    context.emit({ type: 'login.failed', accountId, clientId, usernameDigest: await usernameDigest(), reason });
    return loginPageResponse(context, interactionId, interaction, { error: PASSKEY_FAILED, status: 400, request });
  };
  if (challenge === null) return refuse('passkey challenge missing or used');
  if (assertion === null || userId === null) return refuse('malformed passkey assertion');
  const stored = (await readPasskeys(hooks, { accountId, userId })).find((passkey) => passkey.id === assertion.id);
  if (stored === undefined) return refuse('unknown passkey');
  if (framedCeremony(assertion.response.clientDataJSON)) return refuse('passkey ceremony in a cross-origin frame');
  const rp = relyingParty(context.config);
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await verifyAuthenticationResponse({
      response: assertion,
      expectedChallenge: challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.rpId,
      credential: {
        id: stored.id,
        publicKey: new Uint8Array(Buffer.from(stored.publicKey, 'base64url')),
        counter: stored.counter,
        transports: stored.transports,
      },
      requireUserVerification: true,
    });
  } catch {
    // The verifier throws for every mismatch (origin, RP id, challenge, counter): all are the user's bad input.
    return refuse('passkey assertion refused');
  }
  if (!verified.verified) return refuse('passkey signature refused');
  const { credentialDeviceType } = verified.authenticationInfo;
  // The BE flag is fixed when a credential is made (WebAuthn §7.2 step 19), and `amr` says `hwk` or `swk` by it: an
  // assertion that changes it is not the credential that was registered, or claims a device-bound key it is not.
  // Refused before the counter moves, so a refused assertion changes nothing.
  if (stored.backupEligible !== undefined && stored.backupEligible !== (credentialDeviceType === 'multiDevice')) {
    return refuse('passkey backup eligibility changed');
  }
  // A passkey proves who holds it, not that the host still lets them in: `authenticate`, the password's gate, is
  // never asked here. The claims hook's `null` is the service's one word for "this user is gone" (it also ends
  // their tokens at refresh and UserInfo), so it refuses the passkey too; a throw or a bad answer fails closed.
  // Asked after the signature, so an unsigned post cannot probe the user table; before the counter, so a refusal
  // moves nothing.
  if ((await loadUserClaims(context, { accountId, userId, scopes: ['openid'] })) === null) return refuse('passkey user gone');
  if (
    !(await movedCounter(hooks, {
      accountId,
      userId,
      credentialId: stored.id,
      expectedCounter: stored.counter,
      counter: verified.authenticationInfo.newCounter,
    }))
  ) {
    return refuse('passkey counter changed meanwhile');
  }
  // A verified passkey with user verification is the phishing-resistant level (assurance/levels.ts).
  const amr = passkeyAmr(credentialDeviceType);
  // A passkey that signs in is no failure: its slot goes back (a failing end of the sign-in only throttles sooner).
  await attempt.succeeded();
  return completeSignIn(context, request, interactionId, { userId, authTime: Math.floor(Date.now() / 1000), amr }, ip);
}

/**
 * Moves the stored counter from the value read to the assertion's by the hook's compare-and-set. Verifying against a
 * counter read earlier is not enough on its own: two assertions that read the same counter (a cloned authenticator
 * replaying one value, or an old one landing after a newer one) would both pass, and the slower write would move the
 * counter back. `false` is the host saying the counter is no longer the one read; any other answer is a hook that
 * does not compare, and the sign-in fails closed.
 */
async function movedCounter(hooks: PasskeyHooks, input: Parameters<PasskeyHooks['updateCounter']>[0]): Promise<boolean> {
  const moved: unknown = await hooks.updateCounter(input);
  if (typeof moved !== 'boolean') throw new Error('sentinel-idp: users.passkeys.updateCounter must answer true or false (compare-and-set)');
  return moved;
}
