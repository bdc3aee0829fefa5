/**
 * DPoP proof validation (RFC 9449 §4.3): a JWT the client signs per request with the private key its tokens are
 * bound to. Checked, in order: one compact JWS of sane size; header `typ: dpop+jwt`, no `crit`, an allowed asymmetric
 * `alg`, and a public `jwk` with no private members; the signature under that jwk; `htm` and `htu` equal to this request
 * (query and fragment ignored); `iat` within the configured age (and not in the future beyond the clock
 * tolerance); `ath` equal to the hash of the access token when one is presented; the server nonce when nonces are
 * on; and finally the `jti`, remembered in the Store for the proof's lifetime so that a replay is refused on any
 * instance (proof-replay.ts; callers that must check their request first split the two with {@link checkDPoPProof}).
 * The result is the key's RFC 7638 thumbprint, the value tokens are bound to (`cnf.jkt`).
 */
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { decodeJsonPart } from '../lib/compact-jwt.js';
import { publicKeyProblem } from '../keys/jwk-public.js';
import { currentNonce, isValidNonce } from './nonce.js';
import { rememberProof, type ProofUse } from './proof-replay.js';
import { verifyProofSignature } from './proof-signature.js';

/** The request a proof must match. */
export interface DPoPProofInput {
  /** The `DPoP` header value. */
  proof: string;
  /** The HTTP method of the request. */
  method: string;
  /** The absolute URL of the request (the query is ignored). */
  url: string;
  /** The access token presented with the proof, at a protected resource (then `ath` is required). */
  accessToken?: string | undefined;
  /** Narrower than `dpop.algorithms` for this request (a fapi2 app's proofs: ES256, PS256 or EdDSA only). */
  algorithms?: readonly string[] | undefined;
  /** The clock tolerance of this request's proof in seconds, when not `clockTolerance` (a fapi2 app's: 10–60 s). */
  clockTolerance?: number | undefined;
}

/** A valid proof: the thumbprint of its key and its claims. */
export interface VerifiedProof {
  jkt: string;
  claims: Record<string, unknown>;
  /** The clock tolerance its `iat` was judged with, when not `clockTolerance`: its replay marker must cover it. */
  clockTolerance?: number | undefined;
}

const MAX_PROOF_LENGTH = 8192;

/**
 * The `invalid_dpop_proof` error (RFC 9449 §5 and §7.1); 400 at the token endpoint, the guard turns it into a 401.
 * @example throw invalidProof('the DPoP proof was already used');
 */
export function invalidProof(description: string): OAuthError {
  return new OAuthError('invalid_dpop_proof', description);
}

/**
 * The `use_dpop_nonce` error with a fresh `DPoP-Nonce` (RFC 9449 §8).
 * @example throw useDPoPNonce(context);
 */
export function useDPoPNonce(context: SentinelContext): OAuthError {
  return new OAuthError('use_dpop_nonce', 'the DPoP proof must carry the nonce of the DPoP-Nonce header', {
    headers: { 'dpop-nonce': currentNonce(context) },
  });
}

/**
 * RFC 3986 §6.2.2.2 percent-encoding normalization of a parsed path: an encoded unreserved character is that
 * character (§2.3) and the hex digits of any other triplet are upper case (§2.1). The URL parser leaves both as
 * written, so a client whose HTTP library sends `~` where its proof says `%7E` (or `%2d` where it says `-`) would
 * otherwise miss.
 */
function normalizePercentEncoding(path: string): string {
  if (!path.includes('%')) return path;
  return path.replace(/%[0-9A-Fa-f]{2}/g, (triplet) => {
    const char = String.fromCharCode(Number.parseInt(triplet.slice(1), 16));
    return /^[A-Za-z0-9._~-]$/.test(char) ? char : triplet.toUpperCase();
  });
}

/**
 * `htu` comparison form: scheme, host and path, without query and fragment, after the syntax- and scheme-based
 * normalization RFC 9449 §4.3 asks for (RFC 3986 §6.2.2, §6.2.3): the URL parser lowercases scheme and host, drops a
 * default port, resolves dot segments and gives an empty path as `/`; the percent-encoding is normalized here.
 */
function requestTarget(url: string): string | null {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${normalizePercentEncoding(parsed.pathname)}`;
  } catch {
    return null;
  }
}

/**
 * RFC 9449 §4.1 `ath`: base64url SHA-256 of the access token.
 * @example accessTokenHash(token) // compare with the proof's ath
 */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest('base64url');
}

function decodeHeader(proof: string): Record<string, unknown> {
  const header = decodeJsonPart(proof.split('.')[0] ?? '');
  if (header === null) throw invalidProof('the DPoP proof is not a JWT');
  return header;
}

function decodePayload(proof: string): Record<string, unknown> {
  const payload = decodeJsonPart(proof.split('.')[1] ?? '');
  if (payload === null) throw invalidProof('the DPoP proof payload is not a JSON object');
  return payload;
}

/**
 * Validates one DPoP proof and spends its `jti`: {@link checkDPoPProof}, then `rememberProof` (proof-replay.ts).
 * @throws OAuthError invalid_dpop_proof (or use_dpop_nonce) naming the failed check, never echoing the proof.
 * @example const { jkt } = await verifyDPoPProof(context, { proof, method: 'POST', url: `${issuer}/token` }, { owner: accountId });
 */
export async function verifyDPoPProof(context: SentinelContext, input: DPoPProofInput, use: ProofUse): Promise<VerifiedProof> {
  const verified = await checkDPoPProof(context, input);
  await rememberProof(context, verified, use);
  return verified;
}

/**
 * Every check of a DPoP proof except the replay check, which writes to the Store: a caller first checks the request
 * the proof came with, and spends the `jti` with `rememberProof` (proof-replay.ts) only once that request is good,
 * so that nothing a caller can send without a credential leaves state behind.
 * @throws OAuthError invalid_dpop_proof (or use_dpop_nonce) naming the failed check, never echoing the proof.
 * @example const proof = await checkDPoPProof(context, { proof: header, method: 'POST', url }); // … then rememberProof
 */
export async function checkDPoPProof(context: SentinelContext, input: DPoPProofInput): Promise<VerifiedProof> {
  const { proof } = input;
  if (proof.length > MAX_PROOF_LENGTH || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(proof)) {
    throw invalidProof('the DPoP header must be one compact JWT');
  }
  const header = decodeHeader(proof);
  if (header.typ !== 'dpop+jwt') throw invalidProof('the DPoP proof must have typ dpop+jwt');
  // RFC 7515 §4.1.11: no JWS extension is implemented here, so a proof that marks any as critical is invalid.
  if (header.crit !== undefined) throw invalidProof('the DPoP proof names critical header extensions this service does not implement');
  const { proofMaxAgeSeconds } = context.config.dpop;
  const configured = context.config.dpop.algorithms as readonly string[];
  const algorithms = input.algorithms === undefined ? configured : configured.filter((alg) => input.algorithms?.includes(alg));
  if (typeof header.alg !== 'string' || !algorithms.includes(header.alg)) {
    throw invalidProof(`the DPoP proof must be signed with one of ${algorithms.join(', ')}`);
  }
  const problem = publicKeyProblem(header.jwk);
  if (problem !== null) throw invalidProof(`the jwk of the DPoP proof ${problem}`);
  const jwk = header.jwk as Record<string, unknown>;
  if (!verifyProofSignature(proof, header.alg, jwk)) throw invalidProof('the DPoP proof signature does not verify with its jwk');
  const claims = decodePayload(proof);
  if (claims.htm !== input.method) throw invalidProof('the DPoP proof htm does not match the request method');
  const expected = requestTarget(input.url);
  if (typeof claims.htu !== 'string' || expected === null || requestTarget(claims.htu) !== expected) {
    throw invalidProof('the DPoP proof htu does not match the request URL');
  }
  const now = Math.floor(Date.now() / 1000);
  const tolerance = input.clockTolerance ?? context.config.clockTolerance;
  if (typeof claims.iat !== 'number' || claims.iat < now - proofMaxAgeSeconds - tolerance || claims.iat > now + tolerance) {
    throw invalidProof('the DPoP proof iat is outside the accepted window');
  }
  if (typeof claims.jti !== 'string' || claims.jti === '' || claims.jti.length > 256) {
    throw invalidProof('the DPoP proof needs a jti');
  }
  if (input.accessToken !== undefined) {
    if (typeof claims.ath !== 'string') throw invalidProof('the DPoP proof needs ath, the hash of the access token');
    if (claims.ath !== accessTokenHash(input.accessToken)) throw invalidProof('the DPoP proof ath does not match the access token');
  }
  if (context.config.dpop.nonce && !isValidNonce(context, claims.nonce)) throw useDPoPNonce(context);
  const jkt = await calculateJwkThumbprint(jwk as JWK, 'sha256');
  return input.clockTolerance === undefined ? { jkt, claims } : { jkt, claims, clockTolerance: input.clockTolerance };
}
