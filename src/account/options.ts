/**
 * The `account` option: whether the service serves the end user's account page. Off by default, so a host that
 * has its own account pages does not get a second one at a path it did not choose.
 */
import { z } from 'zod';

/** Schema of the `account` option (used by the options schema). */
export const accountOptionsSchema = z
  .object({
    /** Serve the account page. */
    enabled: z.boolean().default(false),
    /**
     * The oldest sign-in, in seconds, that may add or remove a passkey: an older one signs in again first (the
     * "sudo mode" of GitHub and others), so a browser left signed in for hours cannot be used to enrol a passkey that
     * keeps an intruder in. Bounded, so it cannot be turned into "any sign-in".
     */
    maxSignInAge: z.number().int().min(60).max(3600).default(600),
  })
  .prefault({});

/**
 * The `account` option as hosts write it.
 *
 * @example
 * createSentinel({ ..., account: { enabled: true, maxSignInAge: 300 } })
 */
export type AccountOptions = z.input<typeof accountOptionsSchema>;
