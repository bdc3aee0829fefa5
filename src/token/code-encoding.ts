/**
 * The stored form of an authorization code's record (`code:{gid}`, docs/ARCHITECTURE.md#stored-records): a
 * positional JSON array, as grants have (grant-encoding.ts). Every signed-in authorize request writes one, and
 * `JSON.stringify` of the record as an object with named fields was the largest single cost of that request beyond
 * HTTP (callgrind, issue 36): V8 copies every character of the field names as well as of the values, checking each
 * for escaping. The array writes the values only.
 *
 * `[accountId, clientId, userId, redirectUri, redirectUriInRequest, issuedAt, authTime, sid, scope, codeChallenge,
 * nonce, amr, dpopJkt, acr, resources, claims]`: `redirectUriInRequest` as 1 or 0, `issuedAt` in seconds since the
 * epoch and `authTime` in seconds relative to it; `claims` is `[userinfo, idToken]` (requested-claims.ts names, an
 * empty list for a place that asked for none); an absent optional field is `null`, and trailing ones are left out.
 * The sid is kept whole (a code lives seconds: shortening it as grants do costs more than it saves).
 *
 * Codes live at most 600 s, so an upgrade finds codes the previous version wrote as the named-field object: they
 * still read, checked as they were then. A value that is neither form, or an array with a member of the wrong type or
 * more members than this version knows (a later version's binding it would ignore), is no code record: the caller
 * refuses to redeem it (fail closed).
 */
import type { AcrValue, AmrValue } from '../assurance/levels.js';
import type { RequestedClaims } from './requested-claims.js';

/** What a code stands for. Persisted under `code:{gid}` (code-records.ts) in the positional form below. */
export interface CodeRecord {
  accountId: string;
  clientId: string;
  /** The redirect URI the code was delivered to. */
  redirectUri: string;
  /** Whether the authorize request carried `redirect_uri` (then the token request must repeat it, §4.1.3). */
  redirectUriInRequest: boolean;
  userId: string;
  /** Seconds since the epoch when the user authenticated. */
  authTime: number;
  /**
   * The `sid` of the device session the code was issued in: the grant joins that session in the session index, and
   * its ID tokens carry it (absent on codes issued before sessions were indexed).
   */
  sid?: string | undefined;
  /** Requested scope, if any (space-separated). */
  scope?: string | undefined;
  /** PKCE S256 challenge (RFC 7636), if the request had one. */
  codeChallenge?: string | undefined;
  /** OpenID Connect nonce, if the request had one. */
  nonce?: string | undefined;
  /** DPoP key thumbprint the code is bound to (`dpop_jkt`, RFC 9449 §10). */
  dpopJkt?: string | undefined;
  /** How the user authenticated (RFC 8176 `amr`); the tokens' `acr` follows from it (`assurance/levels.ts`). */
  amr?: AmrValue[] | undefined;
  /**
   * The `acr` the tokens report when the request named essential values (OpenID Connect Core §5.5.1.1,
   * assurance/reported-acr.ts); absent otherwise (and in codes of earlier versions): then derived from `amr`.
   */
  acr?: AcrValue | undefined;
  /** RFC 8707 resources the authorization request named (`resource`); the token request may name only these. */
  resources?: string[] | undefined;
  /** The user claims the request's `claims` parameter asked for by name (OpenID Connect Core §5.5); absent: none. */
  claims?: RequestedClaims | undefined;
  /** Seconds since the epoch when the code was issued. */
  issuedAt: number;
}

/** Members of the array form: the seven always there, and the nine optional ones after them. */
const REQUIRED_MEMBERS = 7;
const ALL_MEMBERS = 16;

/**
 * The stored text of a code's record.
 *
 * @example
 * await context.store.set(codeKey(code), encodeCodeRecord(record), ttlMs);
 */
export function encodeCodeRecord(record: CodeRecord): string {
  const base = record.issuedAt;
  const authTime = record.authTime - base;
  // Exact for any whole seconds, and for fractional ones of the same era (Sterbenz); a host's odd authTime that would
  // not come back exactly is written in the named-field form, which every version reads.
  if (base + authTime !== record.authTime) return JSON.stringify(record);
  const claims = record.claims;
  const parts: unknown[] = [
    record.accountId,
    record.clientId,
    record.userId,
    record.redirectUri,
    record.redirectUriInRequest ? 1 : 0,
    base,
    authTime,
    record.sid ?? null,
    record.scope ?? null,
    record.codeChallenge ?? null,
    record.nonce ?? null,
    record.amr ?? null,
    record.dpopJkt ?? null,
    record.acr ?? null,
    record.resources ?? null,
    claims === undefined ? null : [claims.userinfo ?? [], claims.idToken ?? []],
  ];
  while (parts.length > REQUIRED_MEMBERS && parts[parts.length - 1] === null) parts.pop();
  return JSON.stringify(parts);
}

/**
 * Reads a stored code record in either form; `null` for a value that is neither, which the caller refuses.
 *
 * @example
 * const record = decodeCodeRecord(await context.store.get(codeKeyOf(grantId)));
 */
export function decodeCodeRecord(stored: string | null): CodeRecord | null {
  if (stored === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    return null;
  }
  if (Array.isArray(parsed)) return fromArray(parsed);
  if (typeof parsed !== 'object' || parsed === null) return null;
  // The named-field form of earlier versions, accepted on the checks it was accepted on then.
  const record = parsed as Partial<CodeRecord>;
  const known = isString(record.accountId) && isString(record.clientId) && isString(record.redirectUri) && isString(record.userId);
  return known ? (record as CodeRecord) : null;
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);
const isOptional = (value: unknown, check: (v: unknown) => boolean): boolean => value === null || value === undefined || check(value);

function fromArray(parts: unknown[]): CodeRecord | null {
  if (parts.length < REQUIRED_MEMBERS || parts.length > ALL_MEMBERS) return null;
  const [accountId, clientId, userId, redirectUri, inRequest, issuedAt, authTime, sid, scope, challenge, nonce, amr] = parts;
  const [dpopJkt, acr, resources, claims] = parts.slice(12);
  if (!isString(accountId) || !isString(clientId) || !isString(userId) || !isString(redirectUri)) return null;
  if ((inRequest !== 0 && inRequest !== 1) || !isNumber(issuedAt) || !isNumber(authTime)) return null;
  if (!isOptional(sid, isString) || !isOptional(scope, isString) || !isOptional(challenge, isString)) return null;
  if (!isOptional(nonce, isString) || !isOptional(amr, isStringArray) || !isOptional(dpopJkt, isString)) return null;
  if (!isOptional(acr, isString) || !isOptional(resources, isStringArray)) return null;
  const record: CodeRecord = {
    accountId,
    clientId,
    redirectUri,
    redirectUriInRequest: inRequest === 1,
    userId,
    authTime: issuedAt + authTime,
    issuedAt,
  };
  // Optional fields are set only when present, as the named-field form had them: the token endpoint tells a
  // binding's absence (`dpopJkt`, `codeChallenge`, `sid`) by `undefined`.
  if (isString(sid)) record.sid = sid;
  if (isString(scope)) record.scope = scope;
  if (isString(challenge)) record.codeChallenge = challenge;
  if (isString(nonce)) record.nonce = nonce;
  // The amr, acr and claims are checked again where the code is redeemed, as those of the named-field form are.
  if (isStringArray(amr)) record.amr = amr as AmrValue[];
  if (isString(dpopJkt)) record.dpopJkt = dpopJkt;
  if (isString(acr)) record.acr = acr as AcrValue;
  if (isStringArray(resources)) record.resources = resources;
  if (claims !== null && claims !== undefined) {
    if (!Array.isArray(claims) || claims.length !== 2 || !isStringArray(claims[0]) || !isStringArray(claims[1])) return null;
    const requested: RequestedClaims = {};
    if (claims[0].length > 0) requested.userinfo = claims[0];
    if (claims[1].length > 0) requested.idToken = claims[1];
    record.claims = requested;
  }
  return record;
}
