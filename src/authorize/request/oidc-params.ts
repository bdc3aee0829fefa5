/**
 * The OpenID Connect parameters of an authorization request (OpenID Connect Core §3.1.2.1): `prompt`, `max_age`,
 * `id_token_hint`, `login_hint`, `ui_locales`, `acr_values`, and the ones this service does not support, which get
 * the OpenID Connect answer instead of being silently ignored (§3.1.2.6, §6).
 */
import type { SentinelContext } from '../../http/context.js';
import { verifyIDTokenHint } from '../../token/id-token-hint.js';
import { AuthorizationError, redirectOnFailure } from './authorization-error.js';
import type { AcrValue } from '../../assurance/levels.js';
import { readAcrRequest } from '../../assurance/requested-acr.js';
import type { RedirectTarget } from './authorization-response.js';
import { type RequestedClaims, readRequestedClaims } from '../../token/requested-claims.js';
import { quotedValues } from '../../errors.js';

/** `prompt` values (OpenID Connect Core §3.1.2.1). */
export type PromptValue = 'none' | 'login' | 'consent' | 'select_account';

const PROMPTS: ReadonlySet<string> = new Set<PromptValue>(['none', 'login', 'consent', 'select_account']);
/** BCP 47 language tags as far as a login page needs them: letters, digits and hyphens. */
const LANGUAGE_TAG = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/;
const MAX_UI_LOCALES = 10;
/** Longest language tag kept (RFC 5646 §4.4.1), as the pages keep them (i18n/page-locale.ts). */
const MAX_LANGUAGE_TAG = 35;
/** Longest `login_hint` used to pre-fill the username (the login form's own limit). */
const MAX_LOGIN_HINT = 256;
/** `max_age` beyond this is treated as "no limit" rather than overflowing date arithmetic (about 31 years). */
const MAX_AGE_LIMIT = 1_000_000_000;

/** What the OpenID Connect parameters ask of the sign-in; stored with the interaction. */
export interface OIDCAuthorizationParams {
  /** Distinct `prompt` values, in request order. */
  prompt?: PromptValue[] | undefined;
  /** `max_age` in seconds. */
  maxAge?: number | undefined;
  /** The `sub` of a valid `id_token_hint`. */
  idTokenHintSubject?: string | undefined;
  /**
   * The `sub` the `claims` parameter asks of the ID token (`"id_token": {"sub": {"value": …}}`): only that user may
   * be answered (§3.1.2.2), as for `id_token_hint`.
   */
  claimsSubject?: string | undefined;
  /** `login_hint`, used to pre-fill the username. */
  loginHint?: string | undefined;
  /** `ui_locales`, most preferred first, for the login page. */
  uiLocales?: string[] | undefined;
  /** The level the sign-in must reach (`acr_values`, the `claims` parameter's `acr`; assurance/requested-acr.ts). */
  acr?: AcrValue | undefined;
  /** The known values of an essential `acr` in `claims`: the tokens must report one of them (assurance/reported-acr.ts). */
  essentialAcr?: AcrValue[] | undefined;
  /** The user claims the `claims` parameter asks for by name (§5.5), for UserInfo and the ID token. */
  requestedClaims?: RequestedClaims | undefined;
}

type Reader = (name: string) => string | undefined;

function refuseUnsupported(read: Reader, target: RedirectTarget): void {
  if (read('request') !== undefined) {
    throw new AuthorizationError('request_not_supported', 'request objects (the request parameter) are not supported', target);
  }
  // A pushed request's URN was already replaced by its parameters (par/resolve.ts); any other request_uri ends here.
  if (read('request_uri') !== undefined) {
    throw new AuthorizationError('request_uri_not_supported', 'the request_uri parameter is not supported', target);
  }
  if (read('registration') !== undefined) {
    throw new AuthorizationError('registration_not_supported', 'the registration parameter is not supported', target);
  }
  const responseMode = read('response_mode');
  if (responseMode !== undefined && responseMode !== 'query') {
    throw new AuthorizationError('invalid_request', 'response_mode must be query', target);
  }
}

function readPrompt(read: Reader, target: RedirectTarget): PromptValue[] | undefined {
  const value = read('prompt');
  if (value === undefined) return undefined;
  const values = [...new Set(value.split(' ').filter((token) => token !== ''))];
  const unknown = values.filter((token) => !PROMPTS.has(token));
  if (unknown.length > 0) throw new AuthorizationError('invalid_request', `unsupported prompt value: ${quotedValues(unknown)}`, target);
  // §3.1.2.1: none with any other value is an error.
  if (values.includes('none') && values.length > 1) {
    throw new AuthorizationError('invalid_request', 'prompt=none cannot be combined with other prompt values', target);
  }
  return values.length === 0 ? undefined : (values as PromptValue[]);
}

function readMaxAge(read: Reader, target: RedirectTarget, defaultMaxAge: number | undefined): number | undefined {
  const value = read('max_age');
  // OpenID Connect Registration 1.0 §2: the app's default_max_age stands in for a max_age the request left out; one
  // it sends overrides it (a very large one included, which asks for no limit).
  if (value === undefined) return defaultMaxAge;
  // Any run of digits is a non-negative integer (§3.1.2.1), however long: one past any limit asks for none. The
  // request's length cap bounds it; Number() reads a long one as a large float, or Infinity.
  if (!/^\d+$/.test(value)) {
    throw new AuthorizationError('invalid_request', 'max_age must be a non-negative integer number of seconds', target);
  }
  const seconds = Number(value);
  return seconds > MAX_AGE_LIMIT ? undefined : seconds;
}

/**
 * The `claims` parameter (OpenID Connect Core §5.5) parsed once, for its three readers (the `acr`, the `sub` and
 * the claims asked for by name): `undefined` without one, a problem (a string) unless it is a JSON object.
 */
function parseClaimsParameter(claims: string | undefined): { parsed: Record<string, unknown> | undefined } | string {
  if (claims === undefined) return { parsed: undefined };
  let parsed: unknown;
  try {
    parsed = JSON.parse(claims);
  } catch {
    return 'the claims parameter is not valid JSON';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'the claims parameter must be a JSON object';
  return { parsed: parsed as Record<string, unknown> };
}

/**
 * The `sub` value the `claims` parameter asks of the ID token, or `undefined` (OpenID Connect Core §3.1.2.2: the OP
 * MUST only answer for that user, never for another one with a session). A `sub` member of the wrong type is a
 * problem (a string), as for `acr`.
 */
function readClaimsSubject(claims: Readonly<Record<string, unknown>> | undefined): { subject: string | undefined } | string {
  if (claims === undefined) return { subject: undefined };
  const idToken = claims.id_token;
  if (typeof idToken !== 'object' || idToken === null) return { subject: undefined };
  const sub = (idToken as Record<string, unknown>).sub;
  if (sub === undefined || sub === null) return { subject: undefined };
  if (typeof sub !== 'object' || Array.isArray(sub)) return 'claims.id_token.sub must be null or a JSON object';
  const { value } = sub as Record<string, unknown>;
  if (value === undefined) return { subject: undefined };
  if (typeof value !== 'string' || value === '') return 'claims.id_token.sub.value must be a non-empty string';
  return { subject: value };
}

function readUILocales(read: Reader): string[] | undefined {
  const value = read('ui_locales');
  if (value === undefined) return undefined;
  const tags = value
    .split(' ')
    .filter((tag) => tag.length <= MAX_LANGUAGE_TAG && LANGUAGE_TAG.test(tag))
    .slice(0, MAX_UI_LOCALES);
  return tags.length === 0 ? undefined : tags;
}

/**
 * Reads and checks the OpenID Connect parameters once the redirect URI is trusted; `read` returns a parameter's
 * single value (repeated values are already an error there).
 *
 * `acr_values` and the `claims` parameter's `acr` set the level the sign-in must reach (a session below it signs in
 * again); its other members name user claims to release beyond the scopes' (token/requested-claims.ts). `display`
 * and `claims_locales` are voluntary and ignored.
 *
 * `defaultMaxAge` is the app's `default_max_age`, the `maxAge` of a request without `max_age`.
 *
 * Answers at once when nothing needs waiting for (no `id_token_hint`), else with a promise.
 *
 * @example
 * const oidc = await readOIDCParams(context, (name) => readParam(params, name, target), target, app.defaultMaxAge);
 * @throws AuthorizationError for unsupported parameters and malformed values (at once, or as the promise's rejection).
 */
export function readOIDCParams(
  context: SentinelContext,
  read: Reader,
  target: RedirectTarget,
  defaultMaxAge?: number,
): OIDCAuthorizationParams | Promise<OIDCAuthorizationParams> {
  refuseUnsupported(read, target);
  const prompt = readPrompt(read, target);
  const maxAge = readMaxAge(read, target, defaultMaxAge);
  const hint = read('id_token_hint');
  // Only a hint's check may wait (on the store): without one, the answer is at once, with no promise and microtask.
  if (hint === undefined) return withSignInParams(read, target, prompt, maxAge, undefined);
  return hintSubject(context, hint, target).then((subject) => withSignInParams(read, target, prompt, maxAge, subject));
}

/** The `sub` of a valid `id_token_hint` issued to the request's client. */
async function hintSubject(context: SentinelContext, hint: string, target: RedirectTarget): Promise<string | undefined> {
  // The check may reload the key ring from the store (an unknown kid): a failing store is the usual server_error
  // redirect to the validated redirect URI, reported, not a 500 page that strands the user.
  const verified = await redirectOnFailure(target, verifyIDTokenHint(context, hint, target.accountId));
  if (verified === null || !verified.audiences.includes(target.clientId)) {
    throw new AuthorizationError('invalid_request', 'id_token_hint is not an ID token this service issued to this application', target);
  }
  return verified.sub;
}

/** The parameters read after `id_token_hint`, in the order they were always checked, with what came before. */
function withSignInParams(
  read: Reader,
  target: RedirectTarget,
  prompt: PromptValue[] | undefined,
  maxAge: number | undefined,
  idTokenHintSubject: string | undefined,
): OIDCAuthorizationParams {
  const claimsParameter = parseClaimsParameter(read('claims'));
  if (typeof claimsParameter === 'string') throw new AuthorizationError('invalid_request', claimsParameter, target);
  const claims = claimsParameter.parsed;
  const acrRequest = readAcrRequest(read('acr_values'), claims);
  if (!acrRequest.ok) throw new AuthorizationError(acrRequest.code, acrRequest.description, target);
  const claimsSubject = readClaimsSubject(claims);
  if (typeof claimsSubject === 'string') throw new AuthorizationError('invalid_request', claimsSubject, target);
  const requestedClaims = readRequestedClaims(claims);
  if (typeof requestedClaims === 'string') throw new AuthorizationError('invalid_request', requestedClaims, target);
  const loginHint = read('login_hint');
  return {
    acr: acrRequest.acr,
    essentialAcr: acrRequest.essential,
    prompt,
    maxAge,
    idTokenHintSubject,
    claimsSubject: claimsSubject.subject,
    loginHint: loginHint !== undefined && loginHint.length <= MAX_LOGIN_HINT ? loginHint : undefined,
    uiLocales: readUILocales(read),
    requestedClaims,
  };
}
