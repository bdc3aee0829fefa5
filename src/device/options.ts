/**
 * The `deviceFlow` option (RFC 8628): how long a device authorization lasts and how often a device may poll.
 */
import { z } from 'zod';

/** Schema of the `deviceFlow` option (used by the options schema). */
export const deviceFlowOptionsSchema = z
  .object({
    /** Seconds a device code and its user code stay usable (RFC 8628 §3.2 `expires_in`). */
    expiresIn: z.number().int().min(60).max(3600).default(600),
    /** Seconds a device waits between polls (RFC 8628 §3.2 `interval`); each `slow_down` adds 5 to it. */
    interval: z.number().int().min(1).max(60).default(5),
  })
  .prefault({});

/** The resolved `deviceFlow` option. */
export type DeviceFlowConfig = z.output<typeof deviceFlowOptionsSchema>;
