/**
 * Verifying a JWT a trusted brand issuer signed about one of the account's consumers (RFC 7523 §3, RFC 8693 §2.1
 * with an `id_token` or `jwt` subject token). The issuer is looked up by the JWT's own `iss` among those the
 * account trusts, never across accounts; its keys come from the entry (`jwks`) or its `jwksUri` through the
 * service's SSRF-guarded fetcher of trusted issuers' key sets (its own cache and fetch slots, apart from apps'), and a `kid` the cached set lacks (or, for a JWT naming none, a signature no
 * cached key verifies) refreshes it at most once per {@link KEY_REFRESH_INTERVAL_MS}. The `jku`, `x5u` and `jwk`
 * headers are never followed: the keys are the ones the account registered. What the checks refuse becomes the
 * error the calling grant names (`invalid_grant` for the JWT bearer grant, `invalid_request` for token exchange);
 * the JWT itself is never echoed.
 */
import type { JWTPayload } from 'jose';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { JwksFetchError } from '../client-assertion/jwks-fetch.js';
import { jwksFetcherOf } from '../client-assertion/verify-assertion.js';
import { catchRejection, isThenable } from '../lib/thenable.js';
import { accountMarkerKeys, spendOnce } from '../stores/replay-epoch.js';
import { routeUrl } from '../http/route-paths.js';
import { checkBrandSignature, type SignedBytes } from './brand-signature.js';
import { type CompactJwtParts, decodeJsonPart, isCanonicalBase64url, splitCompactJwt } from '../lib/compact-jwt.js';
import { DEFAULT_CONSUMER_ID_CLAIM, type TrustedIssuer } from './trusted-issuer.js';

/** The longest a brand JWT may live (`exp` − `iat`, or `exp` − now without `iat`): it bounds the `jti` memory too. */
export const MAX_BRAND_JWT_LIFETIME_SECONDS = 3600;
/** A refresh of an issuer's key set for an unknown `kid` happens at most this often per key-set URL. */
export const KEY_REFRESH_INTERVAL_MS = 10_000;
/** Larger than any JWT an identity provider signs about one person; a larger one is refused unread. */
const MAX_JWT_LENGTH = 16_384;

/** What a verified brand JWT says: which trusted issuer signed it, and the consumer it names (not yet validated). */
export interface BrandAssertion {
  issuer: TrustedIssuer;
  /** The value of the issuer's `consumerIdClaim`; the grant decides whether it is a valid participant id. */
  consumerId: string;
  /** Spends the JWT's `jti` (when it has one): call once every other check of the request has passed. */
  spend(): Promise<void>;
}

/** Builds the refusal of the calling grant; the description names the failed check. */
export type Refusal = (description: string) => OAuthError;

/** A key set as registered or fetched: `{ keys: [...] }` (RFC 7517 §5). */
type KeySet = { keys?: unknown };

// Configured issuers, indexed once per resolved configuration (every request-scoped context shares the config).
const indexes = new WeakMap<SentinelContext['config'], Map<string, TrustedIssuer>>();

function configuredIndex(config: SentinelContext['config']): Map<string, TrustedIssuer> {
  let index = indexes.get(config);
  if (index === undefined) {
    index = new Map(config.trustedIssuers.map((entry) => [`${entry.accountId}\u0000${entry.issuer}`, entry]));
    indexes.set(config, index);
  }
  return index;
}

/**
 * The trusted issuer `iss` of `accountId`: the `trustedIssuers` option first, then the registry's
 * `findTrustedIssuers` when it has one. A failing registry propagates (a `server_error`, nothing issued).
 * @example const brand = await findTrustedIssuer(context, '123456', 'https://id.brand.example');
 */
export function findTrustedIssuer(
  context: SentinelContext,
  accountId: string,
  iss: string,
): TrustedIssuer | undefined | Promise<TrustedIssuer | undefined> {
  const configured = configuredIndex(context.config).get(`${accountId}\u0000${iss}`);
  // Answered at once when configured: no promise to settle on every exchange of a brand the options name.
  if (configured !== undefined) return configured;
  const find = context.apps.findTrustedIssuers;
  if (find === undefined) return undefined;
  return registeredIssuer(context, find, accountId, iss);
}

async function registeredIssuer(
  context: SentinelContext,
  find: NonNullable<SentinelContext['apps']['findTrustedIssuers']>,
  accountId: string,
  iss: string,
): Promise<TrustedIssuer | undefined> {
  const registered = await find.call(context.apps, accountId);
  return registered.find((entry) => entry.accountId === accountId && entry.issuer === iss);
}

/**
 * Failures already told to the host. The fetcher hands every request of its pause after a failed fetch (5 s) the
 * same error, so each failed fetch reaches `onError` once, not once per JWT naming the issuer in that time (which
 * any client of the account could send at will).
 */
const reported = new WeakSet<JwksFetchError>();

/** Tells the host why an issuer's keys could not be had; a failing `onError` must not turn a 400 into a crash. */
function reportUnavailable(context: SentinelContext, accountId: string, error: JwksFetchError): void {
  if (reported.has(error)) return;
  reported.add(error);
  try {
    catchRejection(context.config.onError?.(error, { route: 'token', accountId }));
  } catch {
    // the host's reporter failed; the request is refused either way
  }
}

async function issuerKeys(context: SentinelContext, issuer: TrustedIssuer, refresh: boolean): Promise<KeySet> {
  if (issuer.jwks !== undefined) return issuer.jwks as KeySet;
  try {
    return (await jwksFetcherOf(context, 'trusted-issuers').get(issuer.jwksUri as string, {
      refresh,
      minRefreshIntervalMs: KEY_REFRESH_INTERVAL_MS,
    })) as KeySet;
  } catch (error) {
    if (!(error instanceof JwksFetchError)) throw error;
    reportUnavailable(context, issuer.accountId, error);
    // Not a judgement of the JWT: the grant cannot be evaluated now (RFC 6749 §5.2 invalid_grant for every grant).
    throw new OAuthError('invalid_grant', `the trusted issuer's key set is unavailable: ${error.message}`, { cause: error });
  }
}

/** The JWT's parts and its claims, not yet verified: enough to find the issuer whose keys must have signed it. */
function unverifiedClaims(jwt: string, refuse: Refusal, name: string): { parts: CompactJwtParts; claims: JWTPayload } {
  if (jwt.length > MAX_JWT_LENGTH) throw refuse(`${name} is too large`);
  const parts = splitCompactJwt(jwt);
  // The signature's characters are not signed: only its one spelling is taken (an empty one, an unsecured JWT, is
  // the algorithm check's to refuse by name).
  const claims = parts === null || !isCanonicalBase64url(parts.signature) ? null : decodeJsonPart(parts.payload);
  if (parts === null || claims === null) throw refuse(`${name} is not a JWT`);
  return { parts, claims };
}

/**
 * Headers decoded before, by their encoded form: a brand's identity provider signs every JWT with one of a few
 * headers (`{"alg":"RS256","kid":…}`), so decoding each again is work for nothing. Frozen, as they are shared;
 * bounded: past {@link HEADERS_KEPT} spellings the map starts over.
 */
const decodedHeaders = new Map<string, Readonly<Record<string, unknown>>>();
const HEADERS_KEPT = 256;
const HEADER_KEPT_LENGTH = 512;

function protectedHeader(parts: CompactJwtParts, refuse: Refusal, name: string): Readonly<Record<string, unknown>> {
  let header = decodedHeaders.get(parts.header);
  if (header !== undefined) return header;
  const decoded = decodeJsonPart(parts.header);
  if (decoded === null) throw refuse(`${name} is invalid`);
  header = Object.freeze(decoded);
  // Only a header of the usual size is kept: a client's 16 KB ones must not pin megabytes.
  if (parts.header.length > HEADER_KEPT_LENGTH) return header;
  if (decodedHeaders.size >= HEADERS_KEPT) decodedHeaders.clear();
  decodedHeaders.set(parts.header, header);
  return header;
}

/**
 * Whether a JWS `typ` header is that of a plain JWT: absent, or `JWT` (RFC 7519 §5.1), compared as the media type it
 * is (RFC 7515 §4.1.9: case-insensitive, `application/` optional). An explicitly typed JWT is another kind of token
 * (RFC 8725 §3.11): the brand's own access tokens (`at+jwt`, RFC 9068), its logout tokens (`logout+jwt`), security
 * events (`secevent+jwt`) carry `iss`, `sub`, `aud` and `exp` too, and must not pass as an assertion about a consumer.
 */
function isPlainJwtType(typ: unknown): boolean {
  if (typ === undefined) return true;
  if (typeof typ !== 'string') return false;
  const type = typ.toLowerCase();
  return type === 'jwt' || type === 'application/jwt';
}

/** `aud` as a string or an array of strings naming one of `accepted` (RFC 7519 §4.1.3). */
function audienceMatches(aud: unknown, accepted: string | readonly string[]): boolean {
  const wanted = typeof accepted === 'string' ? [accepted] : accepted;
  if (typeof aud === 'string') return wanted.includes(aud);
  return Array.isArray(aud) && aud.some((entry) => typeof entry === 'string' && wanted.includes(entry));
}

/**
 * Verifies `jwt` as a consumer assertion of a trusted issuer of `accountId`, presented by `clientId`. Checks, in
 * order: a trusted `iss` of this account; no `crit`; a `typ`, when present, of a plain JWT; the signature under an asymmetric algorithm with the issuer's
 * keys; `aud` (the configured `audience`, else this account's issuer, its token endpoint or `clientId`); `exp`
 * present and not past; `iat` not in the future; a lifetime of at most an hour; the consumer claim present; a
 * `jti`, when present, not seen before (spent by {@link BrandAssertion.spend}).
 * @throws OAuthError built by `refuse` for each failed check; `invalid_grant` when the issuer's keys are unavailable.
 * @example const brand = await verifyBrandJWT(context, accountId, assertion, app.clientId, (d) => new OAuthError('invalid_grant', d), 'assertion');
 */
export async function verifyBrandJWT(
  context: SentinelContext,
  accountId: string,
  jwt: string,
  clientId: string,
  refuse: Refusal,
  name: string,
): Promise<BrandAssertion> {
  const { parts, claims: payload } = unverifiedClaims(jwt, refuse, name);
  if (typeof payload.iss !== 'string') throw refuse(`${name} has no iss`);
  const found = findTrustedIssuer(context, accountId, payload.iss);
  const issuer = isThenable(found) ? await found : found;
  if (issuer === undefined) throw refuse(`the issuer of ${name} is not trusted by this account`);
  const header = protectedHeader(parts, refuse, name);
  if (header.crit !== undefined) throw refuse(`${name} names critical header extensions this service does not implement`);
  if (!isPlainJwtType(header.typ)) throw refuse(`${name} is typed as another kind of JWT than a consumer assertion`);
  // The signature first: no claim of an unverified JWT decides anything beyond which issuer's keys to try.
  const signed: SignedBytes = {
    input: Buffer.from(jwt.slice(0, parts.header.length + 1 + parts.payload.length), 'latin1'),
    signature: Buffer.from(parts.signature, 'base64url'),
  };
  const mode = context.config.verification;
  // Neither configured keys nor an RSA check need a promise: awaited only when one is there.
  const keys = issuer.jwks !== undefined ? (issuer.jwks as KeySet) : await issuerKeys(context, issuer, false);
  const checked = checkBrandSignature(signed, header, keys, mode);
  let signature = isThenable(checked) ? await checked : checked;
  // A kid the cached set lacks may be a rotation at the issuer, and so may a JWT naming no kid that none of the cached
  // keys verifies (nothing else tells its new key from the old): look once more (rate-limited per key-set URL).
  const mayBeRotation = signature === 'no-matching-key' || (signature === 'bad-signature' && header.kid === undefined);
  if (mayBeRotation && issuer.jwksUri !== undefined) {
    const refreshed = await issuerKeys(context, issuer, true);
    // Within the refresh interval the fetcher hands back the very set just tried: the same checks would refuse the
    // same way, and a forged JWT naming no kid would cost two signature checks per key instead of one.
    if (refreshed !== keys) signature = await checkBrandSignature(signed, header, refreshed, mode);
  }
  if (signature === 'algorithm-not-allowed') throw refuse(`${name} must use an asymmetric algorithm`);
  if (signature !== 'verified') throw refuse(`${name} is not signed by a key of its trusted issuer`);
  const { clockTolerance } = context.config;
  const now = Math.floor(Date.now() / 1000);
  if (payload.iss !== issuer.issuer) throw refuse(`${name} is invalid`);
  if (payload.exp === undefined) throw refuse(`${name} has no exp`);
  // Each refusal names its claim: a brand's developer told only "invalid" looks everywhere but at the clock.
  for (const claim of ['exp', 'iat', 'nbf'] as const) {
    if (payload[claim] !== undefined && typeof payload[claim] !== 'number') throw refuse(`the ${claim} claim of ${name} is not a number`);
  }
  if (typeof payload.nbf === 'number' && payload.nbf > now + clockTolerance) throw refuse(`${name} is not valid yet (nbf)`);
  if ((payload.exp as number) <= now - clockTolerance) throw refuse(`${name} has expired`);
  // Without a configured audience the client's own id is tried first: it needs no URL built for the comparison.
  const audienceOk =
    issuer.audience !== undefined
      ? audienceMatches(payload.aud, issuer.audience)
      : audienceMatches(payload.aud, clientId) ||
        audienceMatches(payload.aud, [context.accountIssuer(accountId), routeUrl(context.config, 'token', { accountId })]);
  if (!audienceOk) throw refuse(`${name} is for another audience`);
  const exp = payload.exp as number;
  if (payload.iat !== undefined && payload.iat > now + clockTolerance) throw refuse(`${name} is issued in the future`);
  if (exp - (payload.iat ?? now) > MAX_BRAND_JWT_LIFETIME_SECONDS) {
    throw refuse(`${name} must not live longer than ${MAX_BRAND_JWT_LIFETIME_SECONDS} seconds`);
  }
  const consumerClaim = issuer.consumerIdClaim ?? DEFAULT_CONSUMER_ID_CLAIM;
  const consumerId = payload[consumerClaim];
  if (consumerId === undefined || consumerId === '') throw refuse(`${name} has no consumer id in its ${consumerClaim} claim`);
  // A number, a list or an object is never a consumer id, nor handed to the host's validator, which expects a string.
  if (typeof consumerId !== 'string') throw refuse(`the ${consumerClaim} claim of ${name} is not a string`);
  const { jti } = payload;
  if (jti !== undefined && (typeof jti !== 'string' || jti === '' || jti.length > 256)) throw refuse(`${name} has a malformed jti`);
  return {
    issuer,
    consumerId,
    async spend() {
      if (jti === undefined) return;
      // Single use (RFC 7523 §3 item 7), remembered as security state until the JWT could no longer pass anyway: on
      // any instance, so the tolerance twice (one whose clock runs behind this one's accepts it that much longer).
      const ttlMs = (Math.max(exp - Math.floor(Date.now() / 1000), 0) + 2 * clockTolerance + 1) * 1000;
      const keys = accountMarkerKeys('brand-jti', accountId, `${issuer.issuer}\u0000${jti}`);
      // After a loss of the store's markers, only a JWT certainly made since could not have been spent before it:
      // one whose iat (never ahead of its use by more than the tolerance) is later, or, without iat, whose exp
      // lies further out than an hour-long JWT spent before the loss could have reached.
      const { iat } = payload;
      const outcome = await spendOnce(context.store, context.config, keys, ttlMs, (since) =>
        iat !== undefined ? iat > since + clockTolerance + 1 : exp - MAX_BRAND_JWT_LIFETIME_SECONDS > since + 1,
      );
      if (outcome === 'replayed') throw refuse(`${name} has already been used`);
      if (outcome === 'maybe-replayed')
        throw refuse(`${name} may have been used before the service lost its replay markers; make a new one`);
    },
  };
}
