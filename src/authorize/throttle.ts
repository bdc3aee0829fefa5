/**
 * Throttling of failed logins (RFC 6749 §10.10 brute force; OWASP credential stuffing): fixed windows of
 * `throttle.windowSeconds`, counted in the Store so that every instance sees the same counts.
 *
 * Two counters: per (account, username), against guessing one user's password (`maxFailures`, default 5), and
 * per client IP, against one address spraying many usernames (`maxFailuresPerIp`, default 50). When either is
 * reached, attempts are refused without calling the user store until the window ends.
 */
import type { SentinelContext } from '../context.js';
import { digest } from '../secrets.js';

/** The counters one login attempt touches. */
export interface ThrottleKeys {
  username: string;
  ip: string | null;
  /**
   * SHA-256 of account and normalized username (base64url, 22 characters): lets audit events correlate failed
   * attempts without carrying the typed text, which is sometimes a password entered in the wrong field.
   */
  usernameDigest: string;
}

/**
 * The counter keys of an attempt. Usernames are compared case-insensitively (so `Alice` and `alice` share a
 * budget) and appear in keys only as digests.
 *
 * @example
 * const keys = throttleKeys(accountId, username, clientIP(context.config, request));
 */
export function throttleKeys(accountId: string, username: string, ip: string | null): ThrottleKeys {
  const normalized = username.normalize('NFKC').trim().toLowerCase();
  const usernameDigest = digest(`${accountId}\u0000${normalized}`);
  return {
    username: `throttle:user:${usernameDigest}`,
    usernameDigest: usernameDigest.slice(0, 22),
    ip: ip === null ? null : `throttle:ip:${ip}`,
  };
}

async function count(context: SentinelContext, key: string): Promise<number> {
  const value = await context.store.get(key);
  const parsed = value === null ? 0 : Number(value);
  return Number.isFinite(parsed) ? parsed : 0;
}

/**
 * Which limit an attempt hits, or `null` when it may proceed.
 *
 * @example
 * if ((await throttledBy(context, keys)) !== null) throw tooManyAttempts(context);
 */
export async function throttledBy(context: SentinelContext, keys: ThrottleKeys): Promise<'username' | 'ip' | null> {
  const { maxFailures, maxFailuresPerIp } = context.config.throttle;
  if (keys.ip !== null && (await count(context, keys.ip)) >= maxFailuresPerIp) return 'ip';
  if ((await count(context, keys.username)) >= maxFailures) return 'username';
  return null;
}

/**
 * Counts one failed attempt against both counters.
 *
 * @example
 * await recordFailure(context, keys);
 */
export async function recordFailure(context: SentinelContext, keys: ThrottleKeys): Promise<void> {
  const windowMs = context.config.throttle.windowSeconds * 1000;
  await context.store.increment(keys.username, windowMs);
  if (keys.ip !== null) await context.store.increment(keys.ip, windowMs);
}

/**
 * Clears the username counter after a successful login (the per-IP counter keeps running: a spraying address
 * that guesses one password right is still spraying).
 *
 * @example
 * await clearFailures(context, keys);
 */
export async function clearFailures(context: SentinelContext, keys: ThrottleKeys): Promise<void> {
  await context.store.delete(keys.username);
}
