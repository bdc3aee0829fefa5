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
  })
  .prefault({});

/**
 * The `account` option as hosts write it.
 *
 * @example
 * createSentinel({ ..., account: { enabled: true } })
 */
export type AccountOptions = z.input<typeof accountOptionsSchema>;
