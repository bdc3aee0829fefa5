/**
 * DPoP at protected resources (RFC 9449 §7): a token with `cnf.jkt` is accepted only with the `DPoP` scheme and a
 * fresh proof, by the key the token is bound to, whose `ath` is the hash of the token; a bound token sent as
 * `Bearer` is refused (it would otherwise be a bearer token after all). Failures carry the `WWW-Authenticate: DPoP`
 * challenge (RFC 9449 §7.1) and, when nonces are on, a `DPoP-Nonce`.
 */
import type { App } from '../apps/app.js';
import { namesMetadataDocument } from '../apps/client-id-metadata.js';
import type { SentinelContext } from '../http/context.js';
import { isOAuthError, OAuthError, wireDescription } from '../errors.js';
import { checkDPoPProof, invalidProof } from './proof.js';
import { FAPI2_ALGORITHMS, proofAlgorithms } from '../assurance/fapi2.js';
import { decodeJsonPart, splitCompactJwt } from '../lib/compact-jwt.js';
import { rememberProof } from './proof-replay.js';
import { dpopHeader } from './token-binding.js';
import type { DPoPPresentation } from './presentation.js';
import { trustsPeer } from '../http/client-ip.js';
import { resourceChallenge } from '../http/authorization-scheme.js';

export type { DPoPPresentation } from './presentation.js';

/**
 * A resource request as an adapter's guard sees it (RFC 9449 §4.3: the method and URL a proof must match).
 * @example sentinel.checkBearer(req.headers.authorization, expectations, { method: req.method, url: req.originalUrl, headers: req.headers, ip: req.socket.remoteAddress });
 */
export interface ResourceRequest {
  method: string;
  /**
   * The request target as received: the path and query (the origin comes from `Host`, HTTP/2's `:authority`, or a
   * trusted proxy's `X-Forwarded-*`), or an absolute-form target, whose authority stands in for `Host` and whose scheme is not
   * believed. Without `secure` and `ip` (no connection described), an absolute URL is the public URL, taken as given.
   */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** Whether the connection is TLS as the host sees it. */
  secure?: boolean | undefined;
  /**
   * The socket peer's address as the host sees it (not a forwarded one): `X-Forwarded-Proto` / `X-Forwarded-Host`
   * are believed only when this peer is a proxy `trustProxy` names (or `trustProxy` is `true`).
   */
  ip?: string | undefined;
}

function challenge(context: SentinelContext, code: string, description: string): string {
  return resourceChallenge(
    'DPoP',
    context.config.dpop.algorithms,
    `, error="${code}", error_description="${wireDescription(description)}"`,
  );
}

/**
 * A 401 with the DPoP challenge for `code`.
 * @example throw dpopUnauthorized(context, 'invalid_token', 'this token is DPoP-bound');
 */
export function dpopUnauthorized(
  context: SentinelContext,
  code: 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce',
  description: string,
  headers: Record<string, string> = {},
): OAuthError {
  return new OAuthError(code, description, {
    status: 401,
    headers: { ...headers, 'www-authenticate': challenge(context, code, description) },
  });
}

/**
 * What a `Host`, `:authority` or forwarded host may hold (RFC 9110 §7.2, RFC 3986 §3.2.2): an IP literal in brackets
 * or a name of letters, digits, dots, hyphens and underscores, and a port. No `/`, `?`, `#`, backslash or `@`.
 */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::\d{0,5})?$/;
const SCHEME = /^https?$/i;
/** The host of a request whose own is missing or malformed: a reserved name (RFC 6761 §6.4) no proof names. */
const UNUSABLE_HOST = 'invalid.invalid';

// An absolute-form request target (`GET https://host/path HTTP/1.1`, RFC 9112 §3.2.2): its authority and the rest.
const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)(.*)$/is;

/**
 * The public URL of a resource request, rebuilt from `Host` or HTTP/2's `:authority` (and the `X-Forwarded-Proto` /
 * `X-Forwarded-Host` a trusted proxy set). Anyone can send those headers, so they are believed only when the socket peer passes the same
 * `trustProxy` check as `X-Forwarded-For` does for the client address (RFC 9700 §4.13); otherwise a proof made for
 * another resource server would pass here with a forged `X-Forwarded-Host`. An absolute-form target, which Node hands
 * on as the request's URL, is the client's too: its authority stands in for `Host` (RFC 9112 §3.2.2), but its scheme
 * never decides (the connection or a trusted proxy does) and a trusted proxy's `X-Forwarded-Host` still wins. A
 * caller that describes no connection (neither `secure` nor `ip`) and gives an absolute URL names the public URL
 * itself: that is taken as given.
 * @example resourceURL(context, { method: 'GET', url: '/api/x?y=1', headers: { host: 'api.example.com' }, secure: true }) // 'https://api.example.com/api/x?y=1'
 */
export function resourceURL(context: SentinelContext, request: ResourceRequest): string {
  const header = (name: string): string | undefined => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const fromProxy = trustsPeer(context.config, request.ip);
  const forwarded = (name: string): string | undefined => (fromProxy ? header(name)?.split(',')[0]?.trim() : undefined);
  const absolute = ABSOLUTE_FORM.exec(request.url);
  // An absolute URL with no connection described (neither `secure` nor `ip`) is the caller's own statement of the
  // public URL, as `checkBearer` has always taken it; every adapter describes its connection, so the rules below
  // apply to whatever came off the wire.
  if (absolute !== null && request.secure === undefined && request.ip === undefined) return request.url;
  // Userinfo is no part of the origin a proof names.
  const authority = absolute === null ? undefined : absolute[1]?.slice(absolute[1].lastIndexOf('@') + 1) || undefined;
  const path = absolute === null ? request.url : (absolute[2] ?? '');
  const proto = forwarded('x-forwarded-proto') ?? (request.secure === true ? 'https' : 'http');
  // HTTP/2 carries the authority as the `:authority` pseudo-header, which Node's compatibility API hands on as a
  // header and which a client need not repeat as `Host` (RFC 9113 §8.3.1): without it every proof would miss.
  const host = forwarded('x-forwarded-host') ?? authority ?? header(':authority') ?? header('host') ?? UNUSABLE_HOST;
  // Spliced into the URL as given, a host carrying more than a host moved where the parser cuts it from the path:
  // `Host: api.example.com/read#` turned a request for `/admin` into one for `/read`, so a proof made for one route
  // passed at any other. A malformed host or scheme names no URL a proof can match.
  const usable = HOST.test(host) && SCHEME.test(proto);
  return `${usable ? proto : 'http'}://${usable ? host : UNUSABLE_HOST}${path.startsWith('/') ? '' : '/'}${path}`;
}

/**
 * The presentation of a resource request under `scheme`.
 * @throws OAuthError invalid_dpop_proof (401) when the DPoP header is repeated.
 * @example const dpop = presentationOf(context, 'DPoP', resource);
 */
export function presentationOf(context: SentinelContext, scheme: 'Bearer' | 'DPoP', request: ResourceRequest): DPoPPresentation {
  let proof: string | undefined;
  try {
    proof = dpopHeader({ method: request.method, path: '', query: new URLSearchParams(), headers: request.headers });
  } catch {
    throw dpopUnauthorized(context, 'invalid_dpop_proof', 'send exactly one DPoP header');
  }
  return { scheme, proof, method: request.method.toUpperCase(), url: resourceURL(context, request) };
}

/**
 * The algorithms the proofs of a token's app may use: a fapi2 app's are narrowed to its profile's at the resource as
 * at the token endpoint. Only a proof outside the profile's algorithms costs the app's lookup, and never for a client
 * ID metadata document's client, which is never fapi2. Whether the app still exists is the liveness check's matter
 * (guard/app-presence.ts): an app the store does not return, or refuses, has no profile to narrow to.
 * @throws whatever the app store throws but `invalid_client` (the store failing: the guard fails closed).
 */
async function proofAlgorithmsOf(
  context: SentinelContext,
  claims: Record<string, unknown>,
  proof: string,
): Promise<readonly string[] | undefined> {
  const parts = splitCompactJwt(proof);
  const alg = parts === null ? undefined : decodeJsonPart(parts.header)?.alg;
  if (typeof alg !== 'string' || FAPI2_ALGORITHMS.includes(alg)) return undefined;
  const prefix = context.accountIssuer('');
  if (typeof claims.iss !== 'string' || !claims.iss.startsWith(prefix) || typeof claims.client_id !== 'string') return undefined;
  // A document names no profile: looking it up would only fetch the agent's URL again, on every request.
  if (namesMetadataDocument(context.config, claims.client_id)) return undefined;
  let app: App | null;
  try {
    app = await context.apps.findApp(decodeURIComponent(claims.iss.slice(prefix.length)), claims.client_id);
  } catch (error) {
    // The store refusing the client is about the client, not a failure: as for no app, the binding check goes on,
    // and never answers invalid_client (a client-authentication error) at a resource.
    if (isOAuthError(error) && error.code === 'invalid_client') return undefined;
    throw error;
  }
  return app === null ? undefined : proofAlgorithms(app);
}

/**
 * Checks how a token was presented against its binding. Unbound tokens pass with `Bearer` (or no presentation);
 * bound tokens need `DPoP`, a proof by the bound key, and `ath`.
 * @throws OAuthError (401, `WWW-Authenticate: DPoP`) invalid_token, invalid_dpop_proof or use_dpop_nonce.
 * @example await checkTokenBinding(context, token, claims, options.dpop);
 */
export async function checkTokenBinding(
  context: SentinelContext,
  token: string,
  claims: Record<string, unknown>,
  presentation: DPoPPresentation | undefined,
): Promise<void> {
  const cnf = claims.cnf as { jkt?: unknown } | undefined;
  const jkt = typeof cnf === 'object' && cnf !== null ? cnf.jkt : undefined;
  if (jkt === undefined) {
    if (presentation?.scheme === 'DPoP') {
      throw dpopUnauthorized(context, 'invalid_token', 'the token is not DPoP-bound; present it with the Bearer scheme');
    }
    return;
  }
  if (presentation === undefined || presentation.scheme !== 'DPoP') {
    throw dpopUnauthorized(context, 'invalid_token', 'the token is DPoP-bound; present it with the DPoP scheme and a DPoP proof');
  }
  if (presentation.proof === undefined) throw dpopUnauthorized(context, 'invalid_dpop_proof', 'a DPoP proof is required with this token');
  try {
    const verified = await checkDPoPProof(context, {
      proof: presentation.proof,
      method: presentation.method,
      url: presentation.url,
      accessToken: token,
      algorithms: await proofAlgorithmsOf(context, claims, presentation.proof),
    });
    // The key is compared before the jti is spent: someone holding a stolen token but not its key, signing proofs
    // with a key of their own, must not get a replay marker written per request.
    if (verified.jkt !== jkt) throw invalidProof('the DPoP proof is signed by another key than the token is bound to');
    // The issuer, checked to be one of this service's, names the token's account: its proofs fill that account's area.
    await rememberProof(context, verified, { owner: String(claims.iss) });
  } catch (error) {
    if (isOAuthError(error) && (error.code === 'invalid_dpop_proof' || error.code === 'use_dpop_nonce')) {
      throw dpopUnauthorized(context, error.code, error.description, { ...error.headers });
    }
    throw error;
  }
}
