/**
 * The request shape revocation (RFC 7009 §2.1) and introspection (RFC 7662 §2.1) share: the `v` and URL-secret
 * checks of the account endpoints, a form with `token` and an optional `token_type_hint`, and client authentication.
 */
import type { App } from '../apps/app.js';
import { readForm } from '../http/form-body.js';
import type { SentinelContext } from '../http/context.js';
import type { SentinelRequest } from '../http/messages.js';
import { required, single } from '../http/params.js';
import { authenticateClient } from './client-auth.js';
import { checkTokenQuery } from './token-endpoint.js';
import { parseTokenTypeHint, type TokenTypeHint } from './token-lookup.js';

/** A parsed, client-authenticated revocation or introspection request. */
export interface RevokeOrIntrospectRequest {
  token: string;
  hint: TokenTypeHint | undefined;
  app: App;
}

/**
 * Reads and authenticates a revocation or introspection request.
 * @throws OAuthError invalid_request (malformed request) or invalid_client (authentication failed).
 * @example const { token, hint, app } = await readRevokeOrIntrospectRequest(context, request, accountId, { allowPublic: true });
 */
export async function readRevokeOrIntrospectRequest(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  options: { allowPublic: boolean },
): Promise<RevokeOrIntrospectRequest> {
  checkTokenQuery(request.query);
  const params = await readForm(request, context.config.bodyLimit);
  const token = required(params, 'token');
  const hint = parseTokenTypeHint(single(params, 'token_type_hint'));
  const { app } = await authenticateClient(context, accountId, request, params, options);
  return { token, hint, app };
}
