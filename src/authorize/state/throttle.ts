/**
 * Throttling of failed logins (RFC 6749 §10.10 brute force; OWASP credential stuffing): fixed windows of
 * `throttle.windowSeconds`, counted in the Store so that every instance sees the same counts.
 *
 * Two counters: per (account, username), against guessing one user's password (`maxFailures`, default 5), and
 * per client IP, against one address spraying many usernames (`maxFailuresPerIp`, default 50). A typed username's
 * attempt also counts against the address's IPv6 /48 (`maxFailuresPerNetwork`, default 500): each name typed creates
 * a counter, and without it a /48 could create 50 for each of its 65 536 /64s in a window. So does a typed device user
 * code's: every guess is at any pending code of the account, and without it a /48 would guess 65 536 times as many
 * codes as one address (RFC 8628 §5.1).
 *
 * Why a reservation and not "check, authenticate, then count": the check and the count must be one atomic step,
 * or twenty guesses sent at the same moment all pass the check before the first failure is counted. So an attempt
 * first takes a slot with the store's atomic `increment` and goes on only when the count the store returned is
 * within the limit; with N concurrent attempts the store hands out the counts 1..N, so at most the limit of them
 * ever reach the user store, whatever the instance and however slow the password check. A failure simply keeps its
 * slot. A success gives its own slot back on both counters, so the counters count failures (plus attempts in
 * flight): an address with many legitimate users behind it (an office NAT) is charged for failures only, and no
 * success in the middle of a burst can reopen the window for the guesses around it.
 *
 * Why typed usernames count under a prefix of their own (`throttle-user:`): anyone can create such a counter by
 * typing a name, before any password is checked, so a flood from many addresses can fill MemoryStore's area for it.
 * Apart from `throttle:` (addresses, second factors, device codes, registration tokens), filling it blocks no other
 * counter. A counter the store has no room for (`SecurityStateFullError`) refuses the attempt as a throttled one
 * (`429`, never uncounted), and `onError` hears of it once per window, not once per request
 * (`stores/counter-slot.ts`, shared with the registration tokens' throttle).
 */
import type { SentinelContext } from '../../http/context.js';
import { OAuthError } from '../../errors.js';
import { takeCounterSlot } from '../../stores/counter-slot.js';
import { type DigestContext, identifierDigest } from './identifier-digest.js';
import { addressBucket, networkBucket } from '../../http/client-ip.js';

/** The counters one login attempt touches. */
export interface ThrottleKeys {
  username: string;
  ip: string | null;
  /**
   * The counter of the address's IPv6 /48 (`throttle:net:`), for typed usernames and user codes only: a /48 holds
   * 65 536 /64s, each with its own `maxFailuresPerIp`, and every attempt at a new name creates a counter; every user
   * code typed is a guess at all of an account's. `null` for IPv4 and others.
   */
  network: string | null;
  /**
   * A keyed digest of account and normalized username (base64url, 22 characters, identifier-digest.ts): lets audit
   * events correlate failed attempts without carrying the typed text, which is sometimes a password entered in the
   * wrong field.
   */
  usernameDigest: string;
}

/**
 * The key prefix of typed usernames' counters: a security area of its own in MemoryStore (see the module comment).
 * Before, they were `throttle:user:`; counters of that name are simply no longer read.
 */
const USERNAME_PREFIX = 'throttle-user';

/** The counters also counted per IPv6 /48: typed usernames', and typed device user codes' (see the module comment). */
const NETWORK_COUNTED: ReadonlySet<string> = new Set([USERNAME_PREFIX, 'throttle:device-code']);

/** Combining marks (accents, the dot of `İ`) and the characters Unicode says to ignore (zero-width, bidi marks). */
const IGNORED_IN_USERNAMES = /[\p{M}\p{Default_Ignorable_Code_Point}]/gu;

/**
 * The spelling a typed username is counted under: folded past compatibility forms, case, accents and invisible
 * characters, so `Alice`, `ALİCE`, `alıce`, `alicé` and `al\u200Bice` share one budget. The user store decides
 * who a name signs in, and many match more loosely than code points (MySQL's default collation ignores accents and
 * case, a store comparing upper-cased names matches the dotless `ı` to `I`): counted apart, each such spelling had
 * budget of its own against the same password, past a lockout. Folding too far only joins counters, which locks
 * sooner, never later.
 *
 * @example usernameCounted(' ALİCE ') // 'alice'
 */
export function usernameCounted(username: string): string {
  return username.normalize('NFKD').replace(IGNORED_IN_USERNAMES, '').toUpperCase().toLowerCase().normalize('NFKC').trim();
}

/**
 * The counter keys of a password attempt. Usernames are counted as {@link usernameCounted} spells them (so `Alice`
 * and `alicé` share a budget) and appear in keys only as digests. Rejects when the digest key cannot be had
 * (identifier-digest.ts).
 *
 * @example
 * const keys = await throttleKeys(context, accountId, username, clientIP(context.config, request));
 */
export function throttleKeys(context: DigestContext, accountId: string, username: string, ip: string | null): Promise<ThrottleKeys> {
  return counterKeys(context, USERNAME_PREFIX, accountId, usernameCounted(username), ip);
}

/** What a counter other than a typed username's counts: a known user's second factor, a device code entry. */
export type ThrottleSubject = 'second-factor' | 'device-code' | 'passkey';

/**
 * The counter keys of an attempt about `subject` (a user id, an address), under a prefix of `kind` alone. Never
 * through {@link throttleKeys}: a username is typed by whoever posts the login form, so a name spelled like
 * another kind's subject would charge that kind's counter, and a stranger could lock a user's second factor by
 * typing the user's id. The subject is kept as given (user ids are case-sensitive).
 *
 * @example
 * const keys = await subjectThrottleKeys(context, 'second-factor', accountId, userId, ip); // throttle:second-factor:…
 */
export function subjectThrottleKeys(
  context: DigestContext,
  kind: ThrottleSubject,
  accountId: string,
  subject: string,
  ip: string | null,
): Promise<ThrottleKeys> {
  return counterKeys(context, `throttle:${kind}`, accountId, subject, ip);
}

async function counterKeys(
  context: DigestContext,
  prefix: string,
  accountId: string,
  subject: string,
  ip: string | null,
): Promise<ThrottleKeys> {
  // Keyed (identifier-digest.ts): a typed name is sometimes a password, and a plain digest is undone with a wordlist.
  const subjectDigest = await identifierDigest(context, `${accountId}\u0000${subject}`);
  const network = ip === null ? null : networkBucket(ip);
  return {
    username: `${prefix}:${subjectDigest}`,
    usernameDigest: subjectDigest.slice(0, 22),
    // IPv6 by its /64: one subscriber holds a whole /64, and counting single addresses would bound nothing.
    ip: ip === null ? null : `throttle:ip:${addressBucket(ip)}`,
    network: network === null || !NETWORK_COUNTED.has(prefix) ? null : `throttle:net:${network}`,
  };
}

async function count(context: SentinelContext, key: string): Promise<number> {
  const value = await context.store.get(key);
  const parsed = value === null ? 0 : Number(value);
  // A counter that does not read as one (store corruption) is over every limit: a throttle fails closed.
  return Number.isFinite(parsed) ? parsed : Number.POSITIVE_INFINITY;
}

/** Which limit refused an attempt. */
export type ThrottleScope = 'username' | 'ip';

/** The outcome of {@link reserveAttempt}: a slot to spend on one call of the user store, or the limit that refused it. */
export type Reservation = { granted: true } | { granted: false; scope: ThrottleScope };

/**
 * Takes one attempt's slot on each of its counters before the user store is asked, deciding on the counts the
 * store's atomic increment returned. An attempt already over a limit is refused after a plain read, without writing, so a
 * locked username costs an attacker's flood nothing to keep locked.
 *
 * @example
 * const reservation = await reserveAttempt(context, keys);
 * if (!reservation.granted) throw tooManyAttempts(reservation.scope);
 */
export async function reserveAttempt(context: SentinelContext, keys: ThrottleKeys): Promise<Reservation> {
  const { maxFailures, maxFailuresPerIp, maxFailuresPerNetwork, windowSeconds } = context.config.throttle;
  if (keys.ip !== null && (await count(context, keys.ip)) >= maxFailuresPerIp) return { granted: false, scope: 'ip' };
  if (keys.network !== null && (await count(context, keys.network)) >= maxFailuresPerNetwork) return { granted: false, scope: 'ip' };
  if ((await count(context, keys.username)) >= maxFailures) return { granted: false, scope: 'username' };
  const windowMs = windowSeconds * 1000;
  if (keys.ip !== null && (await takeCounterSlot(context, keys.ip, windowMs)) > maxFailuresPerIp) {
    return { granted: false, scope: 'ip' };
  }
  if (keys.network !== null && (await takeCounterSlot(context, keys.network, windowMs)) > maxFailuresPerNetwork) {
    // The network refused it: the address gets its slot back.
    if (keys.ip !== null) await context.store.decrement?.(keys.ip);
    return { granted: false, scope: 'ip' };
  }
  if ((await takeCounterSlot(context, keys.username, windowMs)) > maxFailures) {
    // The username refused it, not the address: the address and its network get their slots back.
    await refundAddress(context, keys);
    return { granted: false, scope: 'username' };
  }
  return { granted: true };
}

/**
 * Reserves the attempt's slot, or refuses the attempt as every throttled sign-in step does (password and second
 * factor alike): a `login.throttled` event and `429` with `Retry-After` set to the window.
 *
 * @example
 * await reserveOrRefuse(context, keys, { accountId, clientId }); // then ask the user store
 */
export async function reserveOrRefuse(
  context: SentinelContext,
  keys: ThrottleKeys,
  attempt: { accountId: string; clientId: string },
): Promise<void> {
  const reservation = await reserveAttempt(context, keys);
  if (reservation.granted) return;
  context.emit({ type: 'login.throttled', ...attempt, usernameDigest: keys.usernameDigest, scope: reservation.scope });
  throw new OAuthError('temporarily_unavailable', 'Too many failed sign-in attempts. Wait a few minutes and try again.', {
    status: 429,
    headers: { 'retry-after': String(context.config.throttle.windowSeconds) },
  });
}

// `decrement` is optional in the Store contract (MemoryStore and RedisStore have it): a custom Store without it simply
// never gets address slots back, which only ever errs toward throttling sooner.
async function refundAddress(context: SentinelContext, keys: ThrottleKeys): Promise<void> {
  if (keys.ip !== null) await context.store.decrement?.(keys.ip);
  if (keys.network !== null) await context.store.decrement?.(keys.network);
}

/**
 * After a successful login: gives the attempt's slot back on both counters. A store without `decrement` clears the
 * username counter instead, or every successful sign-in would use up the user's budget; that reopens the window
 * only to someone who already knows the password.
 *
 * @example
 * await settleSuccess(context, keys);
 */
export async function settleSuccess(context: SentinelContext, keys: ThrottleKeys): Promise<void> {
  if (context.store.decrement !== undefined) await context.store.decrement(keys.username);
  else await context.store.delete(keys.username);
  await refundAddress(context, keys);
}

/**
 * After a success anyone can bring about at will, such as a right user code (the public device app hands codes out to
 * whoever asks): gives the attempt's slot back on both counters where the store has `decrement`, and otherwise keeps
 * it. Never clears the counter as {@link settleSuccess} does without `decrement`: a success of one's own making would
 * then wipe the guesses around it, and the limit would bound nothing.
 *
 * @example
 * await refundAttempt(context, keys); // a right user code
 */
export async function refundAttempt(context: SentinelContext, keys: ThrottleKeys): Promise<void> {
  await context.store.decrement?.(keys.username);
  await refundAddress(context, keys);
}
