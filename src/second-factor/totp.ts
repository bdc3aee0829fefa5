/**
 * TOTP codes (RFC 6238, otplib): six digits, 30-second steps, one step of clock drift either way (RFC 6238 §5.2).
 *
 * Replay: a code that was accepted once is refused for the rest of its window (RFC 6238 §5.2: "the verifier MUST
 * NOT accept the second attempt of the same OTP"), in every account whose user has the same secret. The store's
 * atomic `increment` on `totp-used:{secret digest}:{step}` decides it, so of two concurrent submissions of one code
 * exactly one counts, on any instance; and a code older
 * than the newest accepted one is refused too (`totp-last:`), so a code seen over a shoulder cannot be used after
 * the user's own, newer one, even when both arrive at once (the step moves forward by compare-and-set).
 */
import { ScureBase32Plugin, verify } from 'otplib';
import type { SentinelContext } from '../http/context.js';
import { digest } from '../lib/random-secrets.js';
import { spendOnce } from '../stores/replay-epoch.js';

/** Steps of drift accepted either side of now (30 s each). */
const DRIFT_STEPS = 1;
const PERIOD_SECONDS = 30;
/** How long a used step is remembered: longer than the window in which its code is accepted. */
const USED_TTL_MS = (2 * DRIFT_STEPS + 2) * PERIOD_SECONDS * 1000;

/**
 * The secret sizes otplib checks codes for: RFC 4226 §4 (R6) requires a shared secret of at least 128 bits (160
 * recommended). Many authenticator set-ups still issue 80-bit secrets (16 base32 characters); those are refused, not
 * weakened to fit.
 */
const MIN_SECRET_BYTES = 16;
const MAX_SECRET_BYTES = 64;
/** The decoder otplib uses itself, so the answer below is the one `verify` would give. */
const BASE32 = new ScureBase32Plugin();

/**
 * What makes `secret` unable to check any code (not base32, shorter than 128 bits, longer than 512), or `null`.
 *
 * @example
 * totpSecretProblem('JBSWY3DPEHPK3PXP') // 'is 80 bits long; RFC 4226 §4 (R6) requires at least 128 (26 base32 characters)'
 */
export function totpSecretProblem(secret: string): string | null {
  let bytes: number;
  try {
    bytes = BASE32.decode(secret).length;
  } catch {
    return 'is not valid base32';
  }
  if (bytes < MIN_SECRET_BYTES) {
    return `is ${bytes * 8} bits long; RFC 4226 §4 (R6) requires at least ${MIN_SECRET_BYTES * 8} (26 base32 characters)`;
  }
  if (bytes > MAX_SECRET_BYTES) return `is ${bytes * 8} bits long; at most ${MAX_SECRET_BYTES * 8} are accepted`;
  return null;
}

/**
 * The name the replay markers of `secret` are kept under: a digest of the key it decodes to. Per secret, not per
 * account and user: a code is a function of the secret and the time step alone, and a host whose user has one
 * authenticator in several accounts answers the same secret in each, so a code accepted in one must be refused in
 * the others (RFC 6238 §5.2). Decoded first, so that every spelling of one secret (lower case, padding) is one.
 * A SHA-256 of a secret of at least 128 random bits, like every secret the store's keys name. Throws the host's data
 * error for a secret that is not base32.
 *
 * @example
 * const marker = totpSecretMarker(secret); // `totp-used:${marker}:${step}`
 */
export function totpSecretMarker(secret: string): string {
  let key: Uint8Array;
  try {
    key = BASE32.decode(secret);
  } catch (error) {
    throw new Error('sentinel-idp: users.totpSecret returned a secret that is not valid base32', { cause: error });
  }
  return digest(`totp-secret\u0000${Buffer.from(key).toString('base64url')}`);
}

/** The outcome of {@link checkTotp}. */
export type TotpResult = 'accepted' | 'wrong' | 'replayed';

/**
 * Checks a six-digit code against the user's secret, refusing a code already used.
 *
 * @example
 * const result = await checkTotp(context, { accountId, userId, secret, code });
 */
export async function checkTotp(
  context: SentinelContext,
  input: { accountId: string; userId: string; secret: string; code: string },
): Promise<TotpResult> {
  if (!/^\d{6}$/.test(input.code)) return 'wrong';
  const marker = totpSecretMarker(input.secret);
  const lastKey = `totp-last:${marker}`;
  const last = Number((await context.store.get(lastKey)) ?? 'NaN');
  // otplib throws for an `afterTimeStep` past its window, which an instance whose clock runs a step or more ahead
  // of this one can have stored. Held at the window's end, it still refuses every code of the window, as it should.
  const latestStep = Math.floor(Date.now() / 1000 / PERIOD_SECONDS) + DRIFT_STEPS;
  const result = await verify({
    secret: input.secret,
    token: input.code,
    epochTolerance: DRIFT_STEPS * PERIOD_SECONDS,
    ...(Number.isSafeInteger(last) ? { afterTimeStep: Math.min(last, latestStep) } : {}),
  }).catch((error: unknown) => {
    // An unusable secret is the host's data error, not the user's: fail closed with server_error, saying what is
    // wrong with it, otplib's own error as the cause.
    const problem = totpSecretProblem(input.secret) ?? 'otplib refused';
    throw new Error(`sentinel-idp: users.totpSecret returned a secret that ${problem}`, { cause: error });
  });
  if (!result.valid) {
    return Number.isSafeInteger(last) &&
      (await verify({ secret: input.secret, token: input.code, epochTolerance: DRIFT_STEPS * PERIOD_SECONDS })).valid
      ? 'replayed'
      : 'wrong';
  }
  // verify() answers for TOTP and HOTP alike; only the TOTP answer names its time step.
  const step = 'timeStep' in result ? result.timeStep : null;
  if (step === null) return 'wrong';
  // After a loss of the store's markers (src/stores/replay-epoch.ts) a code passes only when its step is too new to
  // have been accepted before the loss was noticed (a second of skew between instances allowed): up to 90 s of
  // refused codes after an empty restart, rather than a seen code accepted twice.
  const outcome = await spendOnce(
    context.store,
    context.config,
    `totp-used:${marker}:${step}`,
    USED_TTL_MS,
    (since) => step > Math.floor((since + 1) / PERIOD_SECONDS) + DRIFT_STEPS,
  );
  if (outcome !== 'first') return 'replayed';
  return (await advanceLast(context, lastKey, step)) ? 'accepted' : 'replayed';
}

/**
 * Moves the newest accepted step forward to `step`, or answers `false` when a step as new or newer was accepted
 * meanwhile. The `last` read above was only a fast refusal: two right codes checked at once both pass it, and a
 * plain write would let the older one in (and even move `last` back). A compare-and-set orders them as if one came
 * after the other, so a code older than the newest accepted one is refused however the requests interleave.
 */
async function advanceLast(context: SentinelContext, lastKey: string, step: number): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const raw = await context.store.get(lastKey);
    const last = Number(raw ?? 'NaN');
    if (Number.isSafeInteger(last) && last >= step) return false;
    if (await context.store.swap([{ key: lastKey, expect: raw, value: String(step), ttlMs: USED_TTL_MS }])) return true;
  }
  throw new Error('sentinel-idp: the newest accepted TOTP step kept changing while a code was being accepted');
}
