/**
 * Compact JWS for access tokens (RFC 9068) and ID tokens: sign and verify, on the main thread or the thread pool.
 *
 * The encoded header of each key and `typ` is computed once; a token costs one JSON.stringify, two base64url
 * encodings and one signature. Verification pins the algorithm to the key found by `kid`; the header's `alg` must
 * equal it, so `none` and algorithm confusion are refused by construction. A header with `crit` is refused: the
 * service understands no JWS extension.
 */
import type { Context as TraceContext } from '@opentelemetry/api';
import { OAuthError } from '../errors.js';
import { signBytes, signBytesInPool, verifyBytes, verifyBytesInPool, type KeySet, type SigningKey } from './signing-keys.js';
import { tracingActive } from '../telemetry/instruments.js';
import { traceSigning } from '../telemetry/signing-span.js';
import { isThenable } from '../lib/thenable.js';
import { decodeJsonPart, isCanonicalBase64url } from '../lib/compact-jwt.js';

/** JWT claims as a plain object. */
export type JWTClaims = Record<string, unknown> & {
  iss?: string;
  sub?: string;
  aud?: string | string[];
  exp?: number;
  iat?: number;
  jti?: string;
  client_id?: string;
};

/** The `typ` header values this service issues (`logout+jwt`: OpenID Connect Back-Channel Logout 1.0 §2.4). */
export type JWTType = 'at+jwt' | 'JWT' | 'logout+jwt';

const headerCache = new WeakMap<SigningKey, Map<JWTType, string>>();

function encodedHeader(key: SigningKey, typ: JWTType): string {
  let byType = headerCache.get(key);
  if (byType === undefined) {
    byType = new Map();
    headerCache.set(key, byType);
  }
  let header = byType.get(typ);
  if (header === undefined) {
    header = Buffer.from(JSON.stringify({ alg: key.alg, typ, kid: key.kid })).toString('base64url');
    byType.set(typ, header);
  }
  return header;
}

/**
 * Where signatures are computed: `threadpool` (crypto.sign with a callback, so the signature of one request runs
 * on another core while the main thread serves the next) or `sync` (on the main thread, lowest latency when idle).
 */
export type SigningMode = 'threadpool' | 'sync';

/**
 * Signs `claims` with the key set's current signer, or with `key` (ID tokens pick theirs by algorithm); `trace` is the
 * request's telemetry context (parent of the signing span).
 */
export async function signJWT(
  keys: KeySet,
  typ: JWTType,
  claims: JWTClaims,
  mode: SigningMode = 'sync',
  key: SigningKey = keys.signer,
  trace?: TraceContext,
): Promise<string> {
  const signingInput = `${encodedHeader(key, typ)}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  // Header and payload are base64url: ASCII, so the latin1 encoding is exact and cheaper than UTF-8's.
  const data = Buffer.from(signingInput, 'latin1');
  // Without a tracer there is no span to open; a signature made here (sync mode) is not awaited.
  const signing = tracingActive()
    ? traceSigning(key.alg, typ, () => computeSignature(key, data, mode), trace)
    : computeSignature(key, data, mode);
  const signature = isThenable(signing) ? await signing : signing;
  return `${signingInput}.${signature.toString('base64url')}`;
}

/** The signature of `data`: by the external signer, on the thread pool, or here (a Buffer, no promise). */
function computeSignature(key: SigningKey, data: Buffer, mode: SigningMode): Buffer | Promise<Buffer> {
  const external = key.external;
  if (external !== undefined) return Promise.resolve(external.sign(data)).then((bytes) => Buffer.from(bytes));
  return mode === 'threadpool' ? signBytesInPool(key, data) : signBytes(key, data);
}

/** What {@link verifyJWT} checks besides the signature. */
export interface VerifyJWTOptions {
  typ: JWTType;
  /** Accepted issuers; the token's `iss` must be one of them (or match the predicate). */
  issuer: (iss: string) => boolean;
  /** Seconds of clock skew tolerated on `exp`/`nbf`/`iat`. */
  clockTolerance?: number;
  now?: number;
  /** Skip the `exp` check only (`nbf` and `iat` are still compared with `now`): for `id_token_hint`. */
  ignoreExpiry?: boolean;
}

function invalid(description: string): OAuthError {
  return new OAuthError('invalid_token', description, { status: 401 });
}

function decodeSegment(segment: string): Record<string, unknown> {
  const value = decodeJsonPart(segment);
  if (value === null) throw invalid('the token is malformed');
  return value;
}

/** A token whose header names one of our keys, split for signature verification. */
interface SignedParts {
  key: SigningKey;
  signed: Buffer;
  signature: Buffer;
  payloadPart: string;
}

function splitSigned(keys: KeySet, token: string, typ: JWTType): SignedParts {
  if (token.length > 8192) throw invalid('the token is malformed');
  const parts = token.split('.');
  if (parts.length !== 3) throw invalid('the token is malformed');
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = decodeSegment(headerPart);
  // RFC 7515 §4.1.11: a JWS naming a critical extension the verifier does not implement is invalid. This service
  // issues none and implements none, so any `crit` (well-formed or not) refuses the token: one property read.
  if (header.crit !== undefined) throw invalid('the token names critical header extensions this service does not implement');
  const key = typeof header.kid === 'string' ? keys.byKid.get(header.kid) : undefined;
  if (key === undefined || header.alg !== key.alg) throw invalid('the token was not signed by this service');
  if (header.typ !== typ) throw invalid(`the token is not of type ${typ}`);
  // The signature's characters are not signed: another spelling of its bytes would verify as this token.
  if (signaturePart === '' || !isCanonicalBase64url(signaturePart)) throw invalid('the token is malformed');
  return {
    key,
    signed: Buffer.from(`${headerPart}.${payloadPart}`),
    signature: Buffer.from(signaturePart, 'base64url'),
    payloadPart,
  };
}

function checkClaims(payloadPart: string, options: VerifyJWTOptions): JWTClaims {
  const claims = decodeSegment(payloadPart) as JWTClaims;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const tolerance = options.clockTolerance ?? 5;
  if (typeof claims.exp !== 'number' || (options.ignoreExpiry !== true && claims.exp + tolerance <= now))
    throw invalid('the token has expired');
  if (typeof claims.nbf === 'number' && claims.nbf - tolerance > now) throw invalid('the token is not yet valid');
  // A token from the future is a forged clock or a leaked signer, never ours: refuse beyond the clock skew.
  if (claims.iat !== undefined && (typeof claims.iat !== 'number' || claims.iat - tolerance > now))
    throw invalid('the token was issued in the future');
  if (typeof claims.iss !== 'string' || !options.issuer(claims.iss)) throw invalid('the token was issued by another issuer');
  return claims;
}

/**
 * Verifies a compact JWS issued by this service and returns its claims.
 * @throws OAuthError invalid_token (401) with a description that never repeats the token.
 */
export function verifyJWT(keys: KeySet, token: string, options: VerifyJWTOptions): JWTClaims {
  const { key, signed, signature, payloadPart } = splitSigned(keys, token, options.typ);
  if (!verifyBytes(key, signed, signature)) throw invalid('the token signature is invalid');
  return checkClaims(payloadPart, options);
}

/**
 * {@link verifyJWT} with the signature checked where `mode` says (`threadpool`: crypto.verify with a callback, so
 * the curve arithmetic runs on another core), returning the key that verified it as well: the bearer guard's cache
 * remembers it to notice a key that has since left the key set.
 */
export async function verifyJWTIn(
  mode: SigningMode,
  keys: KeySet,
  token: string,
  options: VerifyJWTOptions,
): Promise<{ claims: JWTClaims; key: SigningKey }> {
  const { key, signed, signature, payloadPart } = splitSigned(keys, token, options.typ);
  const valid = mode === 'threadpool' ? await verifyBytesInPool(key, signed, signature) : verifyBytes(key, signed, signature);
  if (!valid) throw invalid('the token signature is invalid');
  return { claims: checkClaims(payloadPart, options), key };
}
