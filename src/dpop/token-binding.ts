/**
 * DPoP at the token endpoints (RFC 9449 §5): the proof of a token request names the key the issued tokens are
 * bound to. Without a proof the tokens are plain Bearer tokens, unless the app is registered with `requireDPoP`.
 */
import { isFapi2, proofInput } from '../assurance/fapi2.js';
import type { App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import type { SentinelRequest } from '../http/messages.js';
import { checkDPoPProof, invalidProof, verifyDPoPProof } from './proof.js';
import { rememberProof } from './proof-replay.js';

/**
 * The single `DPoP` header of a request, `undefined` when absent.
 * @throws OAuthError invalid_dpop_proof when the header is repeated.
 * @example const proof = dpopHeader(request);
 */
export function dpopHeader(request: SentinelRequest): string | undefined {
  const value = request.headers.dpop;
  if (Array.isArray(value)) {
    if (value.length > 1) throw invalidProof('send exactly one DPoP header');
    return value[0];
  }
  return value;
}

/**
 * Validates the proof of a token request received at `url` (the endpoint's public URL) and returns the thumbprint
 * to bind the tokens to, or `undefined` at once (no promise) for an unbound request: most token requests carry no
 * proof, and an await per request of nothing is a promise and a microtask each time.
 * @throws OAuthError invalid_dpop_proof for a bad proof, or a missing one when the app requires DPoP.
 * @example
 * const binding = tokenRequestBinding(context, request, app, routeUrl(context.config, 'token', { accountId }));
 * const jkt = binding === undefined ? undefined : await binding;
 */
export function tokenRequestBinding(
  context: SentinelContext,
  request: SentinelRequest,
  app: App,
  url: string,
): Promise<string> | undefined {
  const proof = dpopHeader(request);
  if (proof === undefined) {
    if (app.requireDPoP === true || isFapi2(app)) {
      throw invalidProof('this application must send a DPoP proof with every token request');
    }
    return undefined;
  }
  const input = { proof, method: request.method, url, ...proofInput(app, context.config.clockTolerance) };
  return verifyDPoPProof(context, input, { owner: app.accountId }).then((verified) => verified.jkt);
}

/** A checked proof of a token request whose `jti` is not spent yet: the grant spends it once it is sure to issue. */
export interface PendingProof {
  /** The thumbprint to bind the tokens to. */
  jkt: string;
  /** Spends the `jti` (RFC 9449 §11.1); throws `invalid_dpop_proof` for a replay, `429` when there is no room. */
  remember(): Promise<void>;
}

/**
 * Like {@link tokenRequestBinding} but without spending the proof's `jti`: for the user grants, whose request is
 * checked against the code or refresh token first, so a request with a made-up credential and a fresh self-made
 * proof (all a public client needs is its client_id) writes no security state: each marker written here stands for
 * a code or refresh token that was good. `undefined` at once for an unbound request. `url` may be given as a
 * function: it is then built only for a request that carries a proof (most do not).
 * @throws OAuthError invalid_dpop_proof for a bad proof, or a missing one when the app requires DPoP.
 * @example
 * const pending = pendingTokenRequestProof(context, request, app, () => routeUrl(context.config, 'token', { accountId }));
 * const dpop = pending === undefined ? undefined : await pending; // … checks … await dpop?.remember();
 */
export function pendingTokenRequestProof(
  context: SentinelContext,
  request: SentinelRequest,
  app: App,
  url: string | (() => string),
): Promise<PendingProof> | undefined {
  const proof = dpopHeader(request);
  if (proof === undefined) {
    if (app.requireDPoP === true || isFapi2(app)) {
      throw invalidProof('this application must send a DPoP proof with every token request');
    }
    return undefined;
  }
  const htu = typeof url === 'string' ? url : url();
  const input = { proof, method: request.method, url: htu, ...proofInput(app, context.config.clockTolerance) };
  return checkDPoPProof(context, input).then((verified) => ({
    jkt: verified.jkt,
    remember: () => rememberProof(context, verified, { owner: app.accountId }),
  }));
}

/**
 * The confirmation claim of a bound access token (RFC 9449 §6.1), for `issueAccessToken`'s `extra`.
 * @example issueAccessToken(context, { …, extra: confirmation(jkt) })
 */
export function confirmation(jkt: string | undefined): Record<string, unknown> | undefined {
  return jkt === undefined ? undefined : { cnf: { jkt } };
}

/**
 * The `token_type` of a token response (RFC 9449 §5).
 * @example tokenType(jkt) // 'DPoP' or 'Bearer'
 */
export function tokenType(jkt: string | undefined): 'DPoP' | 'Bearer' {
  return jkt === undefined ? 'Bearer' : 'DPoP';
}
