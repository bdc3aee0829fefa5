/**
 * `private_key_jwt` client authentication (RFC 7523 §2.2 and §3, OpenID Connect Core §9): the client proves
 * possession of a registered private key with a short-lived signed JWT instead of sending a shared secret.
 *
 * Checks: `iss` = `sub` = the client id, `aud` names this issuer, the token endpoint or the URL the request came to
 * (with its query, exactly), `exp` present and not past (and not more than `clientAssertion.maxLifetimeSeconds`
 * ahead, which bounds the replay cache), `jti` present and single-use
 * (remembered in the Store until `exp`), signature by one of the app's registered public keys under an
 * asymmetric algorithm, no `crit` header. Every failure is the same `invalid_client`; the reason goes nowhere but the description.
 */
import { FAPI2_ALGORITHMS, fapi2ClockTolerance, isFapi2 } from '../assurance/fapi2.js';
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors as joseErrors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTVerifyOptions,
  type JWTVerifyResult,
} from 'jose';
import type { App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError, unauthorizedClient } from '../errors.js';
import { ASYMMETRIC_ALGORITHMS } from '../keys/jwk-public.js';
import { isCanonicalBase64url, splitCompactJwt } from '../lib/compact-jwt.js';
import { accountMarkerKeys, spendOnce } from '../stores/replay-epoch.js';
import { JwksFetchError, JwksFetcher } from './jwks-fetch.js';
import { routeUrl } from '../http/route-paths.js';

/** RFC 7523 §2.2 `client_assertion_type` of a JWT assertion. */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/**
 * Whose key sets a fetcher fetches: apps' `jwks_uri`s (anyone who registers or names a client chooses those URLs) or
 * trusted issuers' `jwksUri`s (the operator's and the accounts' registry's choice, and few).
 */
export type KeySetOwner = 'apps' | 'trusted-issuers';

// Keyed by the service's resolved config: handlers get a request-scoped copy of the context (http/context.ts
// requestContext), but every copy shares the config, so the caches live as long as the service.
const fetchers = new WeakMap<SentinelContext['config'], Record<KeySetOwner, JwksFetcher>>();

/**
 * The service's cache of fetched key sets of `owner`: one SSRF guard and one set of limits (`clientJwks`) for both,
 * but apps' and trusted issuers' each have their own cache and their own `maxConcurrentFetches` slots, so that a
 * flood of made-up client `jwks_uri`s can neither refuse a trusted issuer's fetch (and with it every brand-JWT
 * exchange of its consumers) nor push its set out of the cache; their DNS lookups take turns of their own too.
 * @example const keys = await jwksFetcherOf(context, 'apps').get(url);
 */
export function jwksFetcherOf(context: SentinelContext, owner: KeySetOwner): JwksFetcher {
  let byOwner = fetchers.get(context.config);
  if (byOwner === undefined) {
    // A key set served stale is the operator's to hear of: the key host is failing (logger.warn, as at startup).
    const { logger } = context.config;
    const warn = (message: string) => (logger === undefined ? console.warn(message) : logger.warn(message));
    byOwner = {
      apps: new JwksFetcher(context.config.clientJwks, warn, "apps' key sets"),
      'trusted-issuers': new JwksFetcher(context.config.clientJwks, warn, "trusted issuers' key sets"),
    };
    fetchers.set(context.config, byOwner);
  }
  return byOwner[owner];
}

function refused(description: string): OAuthError {
  return unauthorizedClient(description);
}

/**
 * The client id an assertion claims to be from (`sub`, which must equal `iss`), read before any key is chosen.
 * @throws OAuthError invalid_client for an unreadable assertion.
 * @example const clientId = assertionSubject(params.client_assertion);
 */
export function assertionSubject(assertion: string): string {
  if (assertion.length > 16_384) throw refused('the client assertion is too large');
  let claims: Record<string, unknown>;
  try {
    claims = decodeJwt(assertion);
  } catch {
    throw refused('the client assertion is not a JWT');
  }
  if (typeof claims.sub !== 'string' || claims.sub === '' || claims.iss !== claims.sub) {
    throw refused('the client assertion must have iss and sub equal to the client id');
  }
  return claims.sub;
}

/** The `crit` member of the assertion's protected header; an unreadable header is left for jwtVerify to refuse. */
function criticalHeaderOf(assertion: string): unknown {
  try {
    return decodeProtectedHeader(assertion).crit;
  } catch {
    return undefined;
  }
}

/** True for the errors WebCrypto and jose throw for a key they cannot use, whoever sent the JWT. */
function unusableKey(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.name === 'DataError' || (error instanceof TypeError && /requires key modulusLength/.test(error.message));
}

/** A client's `jwks_uri` is fetched anew for a key its cached set lacks (a rotation) at most this often. */
const KEY_SET_REFRESH_INTERVAL_MS = 10_000;

async function keySetOf(context: SentinelContext, app: App, refresh: boolean): Promise<JSONWebKeySet> {
  if (app.jwks !== undefined) return app.jwks as JSONWebKeySet;
  if (app.jwksUri === undefined) throw refused('the application has no registered keys');
  try {
    // A refresh for a key the set lacks at most once per interval: the assertion is not yet verified, so anyone naming
    // the client_id could otherwise make every request fetch the client's jwks_uri anew.
    return (await jwksFetcherOf(context, 'apps').get(app.jwksUri, {
      refresh,
      minRefreshIntervalMs: KEY_SET_REFRESH_INTERVAL_MS,
    })) as JSONWebKeySet;
  } catch (error) {
    if (error instanceof JwksFetchError) throw refused(`the application's key set is unavailable: ${error.message}`);
    throw error;
  }
}

/** The verification views of key sets, per set object (the configured set, or the fetcher's cached copy). */
const verificationViews = new WeakMap<JSONWebKeySet, JSONWebKeySet>();

/**
 * `set` as jose is to import it for a signature check: a key whose `key_ops` is a list of distinct operations that
 * names `verify` (the keys jose picks) carries `key_ops: ["verify"]` alone. Why: jose hands `key_ops` to WebCrypto's
 * `importKey` as the key's usages, and WebCrypto throws a TypeError for an operation it does not know (RFC 7517 §4.3
 * allows others) and a SyntaxError for one a public key cannot do (`sign`); a client's own key set then turned each of
 * its assertions, forged or not, into a 500. Any other `key_ops` is left for jose to pass over, as before.
 */
function forVerification(set: JSONWebKeySet): JSONWebKeySet {
  let view = verificationViews.get(set);
  if (view === undefined) {
    const keys = set.keys.map((key) => {
      const ops: unknown = key.key_ops;
      const picked =
        Array.isArray(ops) && ops.includes('verify') && ops.every((op) => typeof op === 'string') && new Set(ops).size === ops.length;
      return picked && ops.length > 1 ? { ...key, key_ops: ['verify'] } : key;
    });
    view = { ...set, keys };
    verificationViews.set(set, view);
  }
  return view;
}

/**
 * Without a `kid` (RFC 7515 §4.1.4 makes it optional), the registered keys that fit the assertion's algorithm are
 * tried in turn, at most this many: each try is a signature check that anyone naming the client id can make the
 * service run, so a set of many such keys needs its assertions to name their key.
 */
const MAX_CANDIDATE_KEYS = 4;

/** Verifies `assertion` with each key jose found fitting it, as jose documents for `JWKSMultipleMatchingKeys`. */
async function verifyWithEach(
  assertion: string,
  candidates: joseErrors.JWKSMultipleMatchingKeys,
  options: JWTVerifyOptions,
): Promise<JWTVerifyResult> {
  let tried = 0;
  for await (const key of candidates) {
    tried += 1;
    if (tried > MAX_CANDIDATE_KEYS) {
      throw refused(
        `the client assertion must name its key with kid: more than ${MAX_CANDIDATE_KEYS} registered keys could have signed it`,
      );
    }
    try {
      return await jwtVerify(assertion, key, options);
    } catch (error) {
      // Another key's signature: try the next one. Any other failure (a claim) is the assertion's, whatever the key.
      if (!(error instanceof joseErrors.JWSSignatureVerificationFailed)) throw error;
    }
  }
  throw new joseErrors.JWSSignatureVerificationFailed();
}

/**
 * Verifies a client assertion of `app` presented at `endpoint` (the absolute URL of the receiving endpoint, without
 * its query) with `queries` (the request's query string as received and any other spelling of it to accept; ''
 * or none for no query).
 *
 * Clients that set `aud` to the URL they post to (rack-oauth2, Authlib) include its query, and the v2 consumer
 * endpoint names its consumer there; so that URL with each of `queries` is one more exact audience. Nothing is
 * compared by prefix: an assertion made for one consumer's URL does not pass at another's.
 * @throws OAuthError invalid_client (401) for every failure.
 * @example await verifyClientAssertion(context, app, assertion, `${context.accountIssuer(accountId)}/token`, ['v=1.0']);
 */
export async function verifyClientAssertion(
  context: SentinelContext,
  app: App,
  assertion: string,
  endpoint: string,
  queries: readonly string[] = [],
): Promise<void> {
  const issuer = context.accountIssuer(app.accountId);
  const fapi2 = isFapi2(app);
  // One tolerance for every time claim and the replay marker: the profile's window for a fapi2 app's assertions.
  const tolerance = fapi2ClockTolerance(app, context.config.clockTolerance);
  // FAPI 2.0 Security Profile §5.3.2.1: the issuer is the one audience; an endpoint URL is refused.
  const audience = fapi2 ? [issuer] : [issuer, routeUrl(context.config, 'token', { accountId: app.accountId }), endpoint];
  if (!fapi2) for (const query of queries) if (query !== '') audience.push(`${endpoint}?${query}`);
  // jose decodes the signature part with atob, which skips padding and white space and ignores the unused bits of the
  // last character: those spellings would verify as the client's signature (RFC 7515 §2, RFC 4648 §3.5).
  const parts = splitCompactJwt(assertion);
  if (parts === null || !isCanonicalBase64url(parts.signature)) throw refused('the client assertion is not a JWT');
  // RFC 7515 §4.1.11. jose alone would accept `crit: ["b64"]` (it implements RFC 7797); the service implements no
  // extension anywhere, so every verifier answers any `crit` the same way.
  if (criticalHeaderOf(assertion) !== undefined) {
    throw refused('the client assertion names critical header extensions this service does not implement');
  }
  const options: JWTVerifyOptions = {
    algorithms: fapi2 ? [...FAPI2_ALGORITHMS] : [...ASYMMETRIC_ALGORITHMS],
    issuer: app.clientId,
    subject: app.clientId,
    audience,
    clockTolerance: tolerance,
    requiredClaims: ['exp', 'jti'],
  };
  const verify = async (keys: JSONWebKeySet): Promise<JWTVerifyResult> => {
    try {
      return await jwtVerify(assertion, createLocalJWKSet(forVerification(keys)), options);
    } catch (error) {
      if (!(error instanceof joseErrors.JWKSMultipleMatchingKeys)) throw error;
      return verifyWithEach(assertion, error, options);
    }
  };
  let payload: JWTVerifyResult['payload'];
  try {
    const cached = await keySetOf(context, app, false);
    try {
      payload = (await verify(cached)).payload;
    } catch (error) {
      // A rotation the cached set predates: a kid it lacks, or a signature none of its keys verifies (an assertion
      // without kid, RFC 7515 §4.1.4, is tried against the cached keys of its type; a kid reused for a new key).
      // Look once more at the published set; the fetcher allows that once per interval, and hands back the very
      // set it holds otherwise, which was just tried.
      const rotated = error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWSSignatureVerificationFailed;
      if (!rotated || app.jwksUri === undefined) throw error;
      const published = await keySetOf(context, app, true);
      if (published === cached) throw error;
      payload = (await verify(published)).payload;
    }
  } catch (error) {
    if (error instanceof OAuthError) throw error;
    if (error instanceof joseErrors.JWTExpired) throw refused('the client assertion has expired');
    if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'aud') {
      throw refused('the client assertion is for another audience');
    }
    if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWSSignatureVerificationFailed) {
      throw refused('the client assertion is not signed by a key registered for this application');
    }
    if (error instanceof joseErrors.JOSEAlgNotAllowed) {
      throw refused(
        fapi2 ? 'the client assertion must use ES256, PS256 or EdDSA' : 'the client assertion must use an asymmetric algorithm',
      );
    }
    if (error instanceof joseErrors.JOSEError) throw refused('the client assertion is invalid');
    // WebCrypto refusing a key of the client's set (an EC point that is not one, a malformed member), or jose
    // refusing an RSA key under 2048 bits that a host's own registry still serves (configured and fetched sets
    // hold none): the client's keys are unusable, which is the client's matter, not a server error.
    if (unusableKey(error)) throw refused("the application's key set holds a key that cannot be used");
    throw error;
  }
  // …and as a single string: an array naming the issuer among others is refused too.
  if (fapi2 && payload.aud !== issuer) throw refused('the client assertion must name the issuer as its only audience, as a string');
  const now = Math.floor(Date.now() / 1000);
  const exp = payload.exp as number;
  const maxLifetime = context.config.clientAssertion.maxLifetimeSeconds;
  if (exp - now > maxLifetime) throw refused(`the client assertion must expire within ${maxLifetime} seconds`);
  // An empty jti names no assertion: every such assertion would share one marker, the second refused as a replay.
  if (typeof payload.jti !== 'string' || payload.jti === '' || payload.jti.length > 256) throw refused('the client assertion needs a jti');
  const { iat } = payload;
  // As the service's own tokens and brand JWTs: an iat ahead of the clock is a wrong clock or a forged one, and the
  // replay epoch below relies on an accepted assertion's iat never lying ahead of its use.
  if (typeof iat === 'number' && iat > now + tolerance) throw refused('the client assertion is issued in the future');
  // Single use (RFC 7523 §3 item 7): the first presentation counts 1, any replay before exp counts more. Kept the
  // tolerance once more: another instance, whose clock may run behind this one's by up to it, accepts the assertion
  // until its own exp + tolerance, and a marker counted out on this clock alone was gone by then.
  const ttlMs = (exp - now + 2 * tolerance + 1) * 1000;
  const keys = accountMarkerKeys('assertion-jti', app.accountId, `${app.clientId}\u0000${payload.jti}`);
  // After a loss of the store's markers, an assertion passes only when certainly made since (stores/replay-epoch.ts):
  // by its iat, or by an exp further out than any assertion accepted before the loss could have had.
  const outcome = await spendOnce(context.store, context.config, keys, ttlMs, (since) =>
    typeof iat === 'number' ? iat > since + tolerance + 1 : exp - maxLifetime > since + 1,
  );
  if (outcome === 'replayed') throw refused('the client assertion has already been used');
  if (outcome === 'maybe-replayed') {
    throw refused('the client assertion may have been used before the service lost its replay markers; make a new one');
  }
}
