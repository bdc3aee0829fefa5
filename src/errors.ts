/**
 * Errors of the protocol (RFC 6749 §4.1.2.1, §5.2; RFC 6750 §3.1; RFC 7009 §2.2.1) and of configuration.
 *
 * `isOAuthError()` and `isConfigurationError()` test a brand instead of `instanceof`, so they keep working when
 * the core is loaded twice (ESM and CJS copies, or two bundles).
 */

/**
 * Error codes, grouped by the RFC section that defines them (RFC 6749 §4.1.2.1 and §5.2, RFC 7009 §2.2.1,
 * RFC 6750 §3.1).
 *
 * @example
 * const code: OAuthErrorCode = 'invalid_grant';
 */
export type OAuthErrorCode =
  // RFC 6749 §4.1.2.1 (authorization endpoint)
  | 'invalid_request'
  | 'unauthorized_client'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'server_error'
  | 'temporarily_unavailable'
  // RFC 6749 §5.2 (token endpoint)
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  // RFC 7009 §2.2.1
  | 'unsupported_token_type'
  // OpenID Connect Core §3.1.2.6 (authentication error responses)
  | 'interaction_required'
  | 'login_required'
  | 'account_selection_required'
  | 'consent_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'registration_not_supported'
  // OpenID Connect Core §3.1.2.6 (errata set 2): a requested acr the user cannot reach
  | 'unmet_authentication_requirements'
  // RFC 6750 §3.1 (protected resources)
  | 'invalid_token'
  | 'insufficient_scope'
  // RFC 9470 §3 (step-up authentication challenge)
  | 'insufficient_user_authentication'
  // RFC 7591 §3.2.2 (dynamic client registration)
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  // RFC 9449 §5, §7.1, §8 (DPoP)
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  // RFC 9101 §6.2, used by RFC 9126 §4 (pushed authorization requests)
  | 'invalid_request_uri'
  // RFC 8707 §2 (resource indicators)
  | 'invalid_target'
  // RFC 8628 §3.5 (device authorization grant)
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token';

const OAUTH_BRAND = Symbol.for('sentinel-idp.OAuthError');
const CONFIG_BRAND = Symbol.for('sentinel-idp.ConfigurationError');

/**
 * Options of an {@link OAuthError} beyond its code and description, e.g. the 401 and `WWW-Authenticate` header that
 * RFC 6749 §5.2 requires for `invalid_client` after HTTP Basic authentication.
 *
 * @example
 * new OAuthError('invalid_client', 'client authentication failed', { status: 401, headers: { 'www-authenticate': 'Basic realm="sentinel"' } });
 */
export interface OAuthErrorOptions {
  /** HTTP status; defaults to 400 (500 for server_error, 503 for temporarily_unavailable). */
  status?: number;
  /** Extra response headers, e.g. `WWW-Authenticate` or `Allow`. */
  headers?: Record<string, string>;
  /** The underlying failure; reported to `onError`, never to the client. */
  cause?: unknown;
}

/**
 * An error the client is told about: `{ "error": code, "error_description": description }` (RFC 6749 §5.2), or the
 * `error` and `error_description` parameters of an authorization error redirect (RFC 6749 §4.1.2.1).
 *
 * @example
 * throw new OAuthError('invalid_request', 'state is required');
 */
export class OAuthError extends Error {
  readonly code: OAuthErrorCode;
  readonly description: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: OAuthErrorCode, description: string, options: OAuthErrorOptions = {}) {
    super(description, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'OAuthError';
    this.code = code;
    this.description = description;
    this.status = options.status ?? defaultStatus(code);
    this.headers = options.headers ?? {};
    Object.defineProperty(this, OAUTH_BRAND, { value: true });
  }

  /** The RFC 6749 §5.2 JSON body, its description in the characters §5.2 allows (`wireDescription`). */
  toJSON(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: wireDescription(this.description) };
  }
}

/** RFC 6749 §5.2: `error_description` is made of %x20-21 / %x23-5B / %x5D-7E only. */
const WIRE_SAFE = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * `description` as a client may be sent it: in the characters RFC 6749 §5.2 allows an `error_description`, which keep
 * it a valid quoted-string in a `WWW-Authenticate` challenge too (RFC 6750 §3). The service's descriptions are
 * English and mostly already so; a `§` is spelled out, `"` becomes `'`, `\` becomes `/`, and anything else outside
 * the set (a client's non-ASCII text quoted in a description, a control character) becomes `?`. The description
 * `onError` and the events see is left as it was.
 *
 * @example wireDescription('code_verifier must be … (RFC 7636 §4.1)') // '… (RFC 7636 section 4.1)'
 */
export function wireDescription(description: string): string {
  if (WIRE_SAFE.test(description)) return description;
  return description
    .replace(/§\s*/g, 'section ')
    .replace(/"/g, "'")
    .replace(/\\/g, '/')
    .replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '?');
}

/** The most of a request's own values a description quotes. */
const MAX_QUOTED = 200;

/**
 * Runs of base64, base64url or hex characters long enough to be a secret (a 256-bit one is 43 or 64 of them); `%`
 * too, so that a standard-base64 secret a client percent-encoded once more (`%2B`, `%2F`, `%3D`) stays one run.
 */
const SECRET_LIKE_RUN = /[A-Za-z0-9+/=_%-]{32,}/g;
/** What a description says in place of a value {@link looksLikeCredential} holds back. */
export const WITHHELD_VALUE = '[a credential-shaped value, not repeated]';

/**
 * Whether `value` holds what could be a credential: a run of 32 or more base64 or hex characters mixing letters and
 * digits, as every token, code, secret and JWT part is (and no scope name or `prompt` value a client means to send).
 * Why: a client that mixes up its parameters (a refresh token sent as `scope`) must not have the service copy the
 * token into the error redirect's URL, the answer and the audit log's denied event.
 */
function looksLikeCredential(value: string): boolean {
  for (const [run] of value.matchAll(SECRET_LIKE_RUN)) {
    if (/[0-9]/.test(run) && /[A-Za-z]/.test(run)) return true;
  }
  return false;
}

/**
 * A request's values (refused scope tokens, unknown `prompt` values) as a description quotes them: space-separated
 * and cut at 200 characters, a value shaped like a credential replaced by {@link WITHHELD_VALUE}. Uncut, whatever
 * length the request allowed (a body of 16 KiB) would travel back in the answer or the error redirect, and into the
 * denied event's `reason`, which anyone who knows a public client's id can make an existing account's audit log keep.
 *
 * @example `scope not allowed for this application: ${quotedValues(refused)}`
 */
export function quotedValues(values: readonly string[]): string {
  const joined = values.map((value) => (looksLikeCredential(value) ? WITHHELD_VALUE : value)).join(' ');
  return joined.length <= MAX_QUOTED ? joined : `${joined.slice(0, MAX_QUOTED)}...`;
}

function defaultStatus(code: OAuthErrorCode): number {
  if (code === 'server_error') return 500;
  if (code === 'temporarily_unavailable') return 503;
  if (code === 'invalid_token' || code === 'insufficient_user_authentication') return 401;
  if (code === 'insufficient_scope') return 403;
  return 400;
}

/**
 * A failed client authentication answered 401 (RFC 6749 §5.2 `invalid_client`). A 401 must name a scheme the resource
 * takes (RFC 9110 §11.6.1), and the token endpoint takes HTTP Basic, so every such answer carries that challenge: after
 * HTTP Basic, and after a client assertion, which has no HTTP scheme of its own.
 *
 * @example throw unauthorizedClient('client authentication failed');
 */
export function unauthorizedClient(description: string): OAuthError {
  return new OAuthError('invalid_client', description, {
    status: 401,
    headers: { 'www-authenticate': 'Basic realm="sentinel", charset="UTF-8"' },
  });
}

/**
 * A `503 temporarily_unavailable` with `Retry-After: 1`: the request lost to concurrent writers (or met a bound of the
 * service's own) and changed nothing, so the same request again succeeds. A refusal, not a fault: `onError` is not
 * told.
 *
 * @example throw retryShortly('the grant was changing while the refresh token was used; retry shortly');
 */
export function retryShortly(description: string): OAuthError {
  return new OAuthError('temporarily_unavailable', description, { status: 503, headers: { 'retry-after': '1' } });
}

const COMMITTED_BRAND = Symbol.for('sentinel-idp.OAuthError.committed');

/**
 * Marks `error` as a refusal that follows a change the request has already made (a replayed code or a reused refresh
 * token whose grant it revoked): its `token.denied` is then emitted as committed, so a throwing `onEvent` goes to
 * `onError` and the client still hears the refusal. A 500 there would tell it that nothing changed and invite a retry
 * that only meets what the change left. Marked by a brand, not a field, so the error's public shape stays as it is.
 *
 * @example throw committedRefusal(new OAuthError('invalid_grant', 'the refresh token has already been used; the grant is revoked'));
 */
export function committedRefusal(error: OAuthError): OAuthError {
  return branded(error, COMMITTED_BRAND);
}

/** True for an error {@link committedRefusal} marked. */
export function isCommittedRefusal(value: unknown): boolean {
  return hasBrand(value, COMMITTED_BRAND);
}

const BUSY_BRAND = Symbol.for('sentinel-idp.OAuthError.busy');

/**
 * Marks `error` as a refusal the service gave because a bound of its own was reached (every client ID metadata
 * document fetch slot taken), not because of anything about the client: a lookup that reads a refused client as gone
 * (the bearer guard's app presence) must then answer "try again", not call the client's tokens invalid. The client of
 * the request that met the bound hears the refusal unchanged.
 *
 * @example throw busyRefusal(unauthorizedClient(DOCUMENT_UNAVAILABLE));
 */
export function busyRefusal(error: OAuthError): OAuthError {
  return branded(error, BUSY_BRAND);
}

/** True for an error {@link busyRefusal} marked. */
export function isBusyRefusal(value: unknown): boolean {
  return hasBrand(value, BUSY_BRAND);
}

/** Marks `error` with `brand`: a non-enumerable symbol, so the error's public shape (and its JSON) stays as it is. */
function branded(error: OAuthError, brand: symbol): OAuthError {
  Object.defineProperty(error, brand, { value: true });
  return error;
}

function hasBrand(value: unknown, brand: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

/**
 * True for an {@link OAuthError} from any copy of this package: it tests a brand, not `instanceof`, so it holds across
 * the ESM and CJS builds and across bundles. Its `code` is an RFC 6749 §5.2 / RFC 6750 §3.1 error code.
 *
 * @example
 * try { await sentinel.verifyAccessToken(token); } catch (error) { if (isOAuthError(error)) reply(error.status, error.toJSON()); }
 */
export function isOAuthError(value: unknown): value is OAuthError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[OAUTH_BRAND] === true;
}

/**
 * Thrown by `createSentinel()` when an option is wrong; `field` names it (e.g. `apps[1].redirectUris[0]`). Checks
 * include the issuer's form (RFC 8414 §2) and exact, absolute redirect URIs (RFC 9700 §2.1).
 *
 * @example
 * try { createSentinel({ issuer: 'http://id.example.com' }) } catch (e) { if (isConfigurationError(e)) console.error(e.field) }
 */
export class ConfigurationError extends Error {
  readonly code = 'ERR_SENTINEL_CONFIGURATION';
  readonly field: string;

  constructor(field: string, message: string) {
    super(`sentinel-idp: invalid option ${field}: ${message}`);
    this.name = 'ConfigurationError';
    this.field = field;
    Object.defineProperty(this, CONFIG_BRAND, { value: true });
  }
}

/**
 * True for a {@link ConfigurationError} from any copy of this package (a brand check, like {@link isOAuthError}); the
 * options it guards are those of RFC 8414 §2 (issuer) and RFC 9700 §2.1 (redirect URIs).
 *
 * @example
 * try { createSentinel(options); } catch (error) { if (isConfigurationError(error)) console.error(`fix ${error.field}`); }
 */
export function isConfigurationError(value: unknown): value is ConfigurationError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[CONFIG_BRAND] === true;
}
