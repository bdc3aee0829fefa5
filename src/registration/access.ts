/**
 * Who may use the registration endpoints: the initial access token at the registration endpoint (RFC 7591 §3)
 * and an app's own registration access token at its configuration endpoint (RFC 7592 §1). Both arrive as Bearer
 * tokens (RFC 6750 §2.1); a missing or wrong one is 401 `invalid_token` with `WWW-Authenticate: Bearer`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { B64TOKEN } from '../http/authorization-scheme.js';
import { clientIP } from '../http/client-ip.js';
import { auditsAccount } from '../http/denied-accounts.js';
import { isAccountId } from '../lib/account-id.js';
import { namesMetadataDocument } from '../apps/client-id-metadata.js';
import { verifyClientSecret } from '../apps/client-secrets.js';
import type { App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import type { SentinelRequest } from '../http/messages.js';
import { authorizationField, joinsSeveralCredentials, SEVERAL_CREDENTIALS } from '../http/authorization-field.js';
import type { RegistrationOptions } from './options.js';
import { reserveTokenAttempt } from './token-throttle.js';
import { couldBeClientId } from '../lib/client-id-shape.js';

// The token syntax `registration.initialAccessToken` is held to at startup (src/config/schema.ts), so that the
// configured token is always one this parser takes.
const BEARER = new RegExp(`^Bearer +(${B64TOKEN}) *$`, 'i');

function unauthorized(description: string, withError: boolean): OAuthError {
  return new OAuthError('invalid_token', description, {
    status: 401,
    headers: { 'www-authenticate': withError ? `Bearer realm="sentinel", error="invalid_token"` : 'Bearer realm="sentinel"' },
  });
}

function bearerToken(request: SentinelRequest): string {
  const authorization = authorizationField(request);
  if (authorization === undefined) throw unauthorized('a Bearer token is required', false);
  // RFC 6750 §3.1: two credentials (two lines, which the adapters join, or one with a comma) are invalid_request;
  // reading the first would let whichever line a proxy put first manage the app.
  if (joinsSeveralCredentials(authorization)) {
    throw new OAuthError('invalid_request', SEVERAL_CREDENTIALS, {
      status: 400,
      headers: { 'www-authenticate': 'Bearer realm="sentinel", error="invalid_request"' },
    });
  }
  const found = BEARER.exec(authorization);
  if (found === null) throw unauthorized('the Authorization header must be "Bearer <token>"', true);
  return found[1] as string;
}

/** The registration options, or 404 when dynamic registration is not enabled. */
export function registrationOptions(
  context: SentinelContext,
): RegistrationOptions & { secretOverlapSeconds: number; registrationsPerAddress: number; registrationsPerNetwork: number } {
  const options = context.config.registration;
  if (options === undefined) throw new OAuthError('invalid_request', 'dynamic client registration is not enabled', { status: 404 });
  return options;
}

function sameToken(presented: string, expected: string): boolean {
  // Digests first: equal lengths for timingSafeEqual, and no early exit on the first differing character.
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/**
 * Checks the initial access token of a registration request in `accountId`: throttled per address, a wrong one
 * audited (`registration.denied`, without the token). A host's check function gets the address and headers too, so
 * that it can apply its own limits.
 */
export async function requireInitialAccessToken(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<void> {
  const { initialAccessToken } = registrationOptions(context);
  // Where an account's first app is created: its id must be one every URL of the account can carry.
  if (!isAccountId(accountId)) throw new OAuthError('invalid_request', 'the account id in the path is malformed');
  const token = bearerToken(request);
  const ip = clientIP(context.config, request);
  const attempt = await reserveTokenAttempt(context, ip, accountId);
  const allowed =
    typeof initialAccessToken === 'string'
      ? sameToken(token, initialAccessToken)
      : (await initialAccessToken(token, { accountId, ip: ip ?? undefined, headers: request.headers })) === true;
  if (!allowed) {
    context.emit({ type: 'registration.denied', accountId, reason: 'wrong initial access token' });
    throw unauthorized('the initial access token is not valid for this account', true);
  }
  await attempt.succeeded();
}

/**
 * The app a registration access token manages. Unknown app, an app of another account, a client id that names a
 * metadata document (never looked up) and a wrong token all fail the same way, after the same digest comparison.
 */
export async function requireRegistrationAccess(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  clientId: string | undefined,
): Promise<App> {
  registrationOptions(context);
  const token = bearerToken(request);
  // Throttled and audited as a wrong initial access token is: both are guesses at a secret that manages apps.
  const attempt = await reserveTokenAttempt(context, clientIP(context.config, request), accountId, clientId);
  // A client named by its metadata document never registered, so it holds no registration access token: looking it
  // up would fetch the URL (anyone could make the service fetch any URL without a token) and refuse as the document
  // resolver does (invalid_client, after the fetch deadline, no event) instead of as below.
  const registered = clientId !== undefined && !namesMetadataDocument(context.config, clientId);
  const app = registered ? await context.apps.findApp(accountId, clientId) : null;
  if (app !== null) context.observation?.noteAccount(app.accountId);
  const ok = verifyClientSecret(token, app?.registrationAccessTokenHash);
  if (app === null || !ok || app.accountId !== accountId) {
    // Audited only for accounts that exist: nobody can read the events of a made-up one (http/denied-accounts.ts).
    if (await auditsAccount(context, accountId, 'registration')) {
      // The client the path names, unless no client could have it: that is the caller's text of any length.
      const named = clientId !== undefined && couldBeClientId(clientId) ? clientId : undefined;
      context.emit({ type: 'registration.denied', accountId, clientId: named, reason: 'wrong registration access token' });
    }
    throw unauthorized('the registration access token is not valid for this client', true);
  }
  await attempt.succeeded();
  return app;
}
