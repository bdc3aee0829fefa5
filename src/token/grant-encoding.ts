/**
 * The stored form of a grant (`grant:{gid}`, docs/ARCHITECTURE.md#stored-records). A live grant is what a store holds
 * most of after device sessions (one per app a user signed in to, for the refresh token's whole idle lifetime), so
 * its length is most of a store's memory per signed-in user: it is a positional JSON array, not an object with
 * named fields, and its times after the first are offsets from it (a few digits instead of ten).
 *
 * `[accountId, clientId, userId, scope, changedAt, authTime, absoluteExpiresAt, accessUntil, amr, sid, refresh,
 * revokedJtis, resources, acr, claims, grantType]` (`acr`, `claims` and `grantType` last: they came later, and grants without them keep their
 * length; a grant of an earlier version, shorter, reads as one without them, and an earlier version reading a grant
 * with `claims` ignores the member it does not know); `grantType` is the device code grant's URN or absent (a code
grant); `claims` is `[userinfo, idToken]`, the names of
 * requested-claims.ts (an empty list for a place that asked for none):
 * `changedAt` in seconds since the epoch, the three times after it in seconds relative to it; `sid` only its session
 * part when its user part is the grant's user's (src/sessions/sid.ts `compactSid`: derived again on reading; whole
 * sids, as grants of earlier versions hold them, still read); `refresh` is `[gen, family, current, issuedAt,
 * expiresAt, jkt]` (times relative to `changedAt`, `jkt` left out when unbound; the digests short ones since
 * 2026-11-30, grant-records.ts) or `null`; an absent optional field is `null`, and trailing ones are left out.
 *
 * Grants written by earlier versions (the record as a JSON object with named fields) still read, so an upgrade ends
 * nobody's refresh token; the next write of such a grant (a rotation) stores it in the array form. A value that is
 * neither form is no grant: its tokens are refused, as after a revocation (fail closed).
 */
import type { AcrValue, AmrValue } from '../assurance/levels.js';
import { DEVICE_CODE_GRANT } from '../apps/app.js';
import { compactSid, expandSid } from '../sessions/sid.js';
import { type RequestedClaims, storedClaimNames } from './requested-claims.js';

/** The refresh side of a grant: which generation is current. */
export interface GrantRefreshState {
  /** Generation of the current refresh token (0 for the one issued with the code). */
  gen: number;
  /**
   * Digest of the family secret every refresh token of the grant carries: its `shortDigest` (22 characters), or the
   * full digest (43) in a grant of an earlier version until its next rotation.
   */
  family: string;
  /** Digest of the current generation's secret, as `family` is (compared by `matchesStoredDigest`). */
  current: string;
  /** Seconds since the epoch when the current refresh token was issued. */
  issuedAt: number;
  /** Seconds since the epoch when the current refresh token expires (idle lifetime, capped by the absolute one). */
  expiresAt: number;
  /**
   * DPoP key thumbprint a public client's refresh tokens are bound to (RFC 9449 §5), set when the grant is created
   * and carried over by every rotation.
   */
  jkt?: string | undefined;
}

/** A grant. Persisted under `grant:{gid}` in the positional form of grant-encoding.ts. */
export interface GrantRecord {
  accountId: string;
  clientId: string;
  userId: string;
  /** The scope of the original grant (a refresh may narrow an access token's scope, never this). */
  scope?: string | undefined;
  /** Seconds since the epoch when the user authenticated. */
  authTime: number;
  /** How the user authenticated (RFC 8176), from the code: refreshed tokens keep the sign-in's `acr` and `amr`. */
  amr?: AmrValue[] | undefined;
  /**
   * The `acr` the code reported for essential `acr` values (OpenID Connect Core §5.5.1.1): refreshed tokens report it
   * too. Absent otherwise, and in grants of earlier versions: then derived from `amr`.
   */
  acr?: AcrValue | undefined;
  /** The `sid` of the device session the grant was issued through (its ID tokens carry it; session-index.ts). */
  sid?: string | undefined;
  /** Seconds since the epoch when the code was redeemed or the refresh token last rotated. */
  changedAt: number;
  /** Seconds since the epoch after which no refresh token of the grant is accepted. */
  absoluteExpiresAt: number;
  /** The latest `exp` of an access token issued from the grant: the record must live at least that long. */
  accessUntil: number;
  /** `null` when the app is not registered for refresh_token. */
  refresh: GrantRefreshState | null;
  /** Access tokens revoked one by one (RFC 7009): jti → exp, pruned once expired. */
  revokedJtis?: Record<string, number> | undefined;
  /** RFC 8707 resources of the code the grant came from: a refresh may name only these. */
  resources?: string[] | undefined;
  /** The user claims the authorization request asked for by name (OpenID Connect Core §5.5): every refresh keeps them. */
  claims?: RequestedClaims | undefined;
  /**
   * The grant type the grant was made with, when not the authorization code (RFC 8628's device code): a refreshed
   * access token's `gty` names it. Absent in grants of earlier versions, which read as code grants, as they did.
   */
  grantType?: typeof DEVICE_CODE_GRANT | undefined;
}

/**
 * The stored text of a grant.
 *
 * @example
 * await context.store.set(grantKey(grantId), encodeGrant(grant), grantTtlMs(context, grant));
 */
export function encodeGrant(grant: GrantRecord): string {
  const base = grant.changedAt;
  const refresh = grant.refresh;
  const parts: unknown[] = [
    grant.accountId,
    grant.clientId,
    grant.userId,
    grant.scope ?? null,
    base,
    grant.authTime - base,
    grant.absoluteExpiresAt - base,
    grant.accessUntil - base,
    grant.amr ?? null,
    grant.sid === undefined ? null : compactSid(grant.accountId, grant.userId, grant.sid),
    refresh === null ? null : refreshParts(refresh, base),
    grant.revokedJtis ?? null,
    grant.resources ?? null,
    grant.acr ?? null,
    grant.claims === undefined ? null : [grant.claims.userinfo ?? [], grant.claims.idToken ?? []],
    grant.grantType ?? null,
  ];
  while (parts.length > 0 && parts[parts.length - 1] === null) parts.pop();
  return JSON.stringify(parts);
}

/** The refresh state as `[gen, family, current, issuedAt, expiresAt, jkt?]`, times as offsets from `base`. */
function refreshParts(refresh: GrantRefreshState, base: number): unknown[] {
  const parts: unknown[] = [refresh.gen, refresh.family, refresh.current, refresh.issuedAt - base, refresh.expiresAt - base];
  if (refresh.jkt !== undefined) parts.push(refresh.jkt);
  return parts;
}

/**
 * Reads a stored grant in either form (the array, or the named-field object of earlier versions); `null` for a value
 * that is neither, which the caller treats as no grant.
 *
 * @example
 * const grant = decodeGrant(await context.store.get(grantKey(grantId)));
 * if (grant === null) throw new OAuthError('invalid_grant', 'the refresh token is invalid or has expired');
 */
export function decodeGrant(raw: string | null): GrantRecord | null {
  if (raw === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return null;
  }
  if (Array.isArray(parsed)) return fromArray(parsed);
  if (typeof parsed !== 'object' || parsed === null || !isLegacyGrant(parsed as Partial<GrantRecord>)) return null;
  // The named-field form predates `claims`: a member of that name is none this service wrote, so none is trusted.
  const legacy = parsed as GrantRecord;
  if (legacy.claims !== undefined) delete legacy.claims;
  return legacy;
}

const isString = (value: unknown): value is string => typeof value === 'string';
/** Times are whole seconds when the service sets them; a host's `authTime` may not be, and still round-trips. */
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isOptional = (value: unknown, check: (v: unknown) => boolean): boolean => value === null || value === undefined || check(value);
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);
const isJtiMap = (value: unknown): value is Record<string, number> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every(isNumber);

function fromArray(parts: unknown[]): GrantRecord | null {
  const [accountId, clientId, userId, scope, changedAt, authTime, absolute, access, amr, sid, refresh, revokedJtis, resources, acr] = parts;
  const claims = parts[14];
  const grantType = parts[15];
  // Only the one value this service writes: anything else is no grant of ours (fail closed).
  if (grantType !== null && grantType !== undefined && grantType !== DEVICE_CODE_GRANT) return null;
  if (!isString(accountId) || !isString(clientId) || !isString(userId) || !isNumber(changedAt)) return null;
  if (!isNumber(authTime) || !isNumber(absolute) || !isNumber(access)) return null;
  if (!isOptional(scope, isString) || !isOptional(amr, isStringArray) || !isOptional(sid, isString)) return null;
  if (!isOptional(revokedJtis, isJtiMap) || !isOptional(resources, isStringArray) || !isOptional(acr, isString)) return null;
  let refreshState: GrantRefreshState | null = null;
  if (refresh !== null && refresh !== undefined) {
    refreshState = refreshFromArray(refresh, changedAt);
    if (refreshState === null) return null;
  }
  const grant: GrantRecord = {
    accountId,
    clientId,
    userId,
    authTime: changedAt + authTime,
    changedAt,
    absoluteExpiresAt: changedAt + absolute,
    accessUntil: changedAt + access,
    refresh: refreshState,
  };
  // Optional fields are set only when present, as the grants written before this form had them.
  if (isString(scope)) grant.scope = scope;
  if (isStringArray(amr)) grant.amr = amr as AmrValue[];
  if (isString(sid)) {
    const full = expandSid(accountId, userId, sid);
    if (full === null) return null;
    grant.sid = full;
  }
  if (isJtiMap(revokedJtis)) grant.revokedJtis = revokedJtis;
  if (isStringArray(resources)) grant.resources = resources;
  // Checked against the amr where the tokens are signed (assuranceClaims), as the amr is.
  if (isString(acr)) grant.acr = acr as AcrValue;
  if (claims !== null && claims !== undefined) {
    const requested = claimsFromArray(claims);
    if (requested === null) return null;
    if (requested !== undefined) grant.claims = requested;
  }
  if (grantType === DEVICE_CODE_GRANT) grant.grantType = grantType;
  return grant;
}

/** `[userinfo, idToken]` as written by encodeGrant; names the service cannot release are dropped (never trusted). */
function claimsFromArray(value: unknown): RequestedClaims | undefined | null {
  if (!Array.isArray(value) || value.length !== 2 || !value.every(isStringArray)) return null;
  const userinfo = storedClaimNames(value[0], 'userinfo');
  const idToken = storedClaimNames(value[1], 'idToken');
  if (userinfo.length === 0 && idToken.length === 0) return undefined;
  const requested: RequestedClaims = {};
  if (userinfo.length > 0) requested.userinfo = userinfo;
  if (idToken.length > 0) requested.idToken = idToken;
  return requested;
}

function refreshFromArray(value: unknown, base: number): GrantRefreshState | null {
  if (!Array.isArray(value) || value.length < 5 || value.length > 6) return null;
  const [gen, family, current, issuedAt, expiresAt, jkt] = value as unknown[];
  if (!Number.isSafeInteger(gen) || !isString(family) || !isString(current) || !isNumber(issuedAt) || !isNumber(expiresAt)) return null;
  if (!isOptional(jkt, isString)) return null;
  const state: GrantRefreshState = { gen: gen as number, family, current, issuedAt: base + issuedAt, expiresAt: base + expiresAt };
  if (isString(jkt)) state.jkt = jkt;
  return state;
}

/** The fields every grant of the named-field form has: a record without them is not one of ours. */
function isLegacyGrant(grant: Partial<GrantRecord>): boolean {
  const refresh = grant.refresh;
  return (
    isString(grant.accountId) &&
    isString(grant.clientId) &&
    isString(grant.userId) &&
    isNumber(grant.authTime) &&
    isNumber(grant.changedAt) &&
    isNumber(grant.absoluteExpiresAt) &&
    isNumber(grant.accessUntil) &&
    (refresh === null ||
      (typeof refresh === 'object' &&
        refresh !== undefined &&
        Number.isSafeInteger(refresh.gen) &&
        isString(refresh.family) &&
        isString(refresh.current) &&
        isNumber(refresh.issuedAt) &&
        isNumber(refresh.expiresAt)))
  );
}
