/**
 * The `passkeys` option and the relying party it describes (WebAuthn §5.1.4): by default the issuer's host name is
 * the RP id and the issuer's origin the only accepted origin, so a passkey made here is never usable on another site.
 */
import { z } from 'zod';
import { NETWORK_MULTIPLE } from '../http/address-bound-default.js';

const ORIGIN_FORMAT = 'must be an origin such as https://id.example.com';

/** Schema of the `passkeys` option (used by the options schema). */
export const passkeysOptionsSchema = z
  .object({
    /** The RP id; the issuer's host name by default. A registrable suffix of it lets sibling hosts share passkeys. */
    rpId: z
      .string()
      .regex(/^[a-z0-9.-]+$/, 'must be a lower-case host name')
      .optional(),
    /** Shown by the browser when a passkey is made; the branding's product name by default. */
    rpName: z.string().min(1).max(100).optional(),
    /**
     * Accepted origins of the pages that use passkeys; the issuer's origin by default. Kept as browsers serialize them
     * (RFC 6454 §6.2: lower-case host, punycode, no default port), the form the browser writes into every
     * assertion and the verifier compares exactly: `https://ID.example.com:443` would otherwise start and refuse
     * every passkey of that page.
     */
    origins: z
      .array(
        z
          .string()
          .regex(/^https?:\/\/[^/?#]+$/, ORIGIN_FORMAT)
          .refine((origin) => URL.canParse(origin), ORIGIN_FORMAT)
          .transform((origin) => new URL(origin).origin),
      )
      .min(1)
      .optional(),
    /** Offer to add a passkey after a password sign-in, to users who have none yet. */
    offerRegistration: z.boolean().default(false),
    /**
     * The most passkeys one user may have in an account: a user at it adds none until one is removed. At most 200,
     * the passkeys the account page reads (`ACCOUNT_LIST_BOUND`), so that every passkey the service adds is listed
     * there, with its Remove button.
     */
    maxPerUser: z.number().int().min(1).max(200).default(20),
    /** Passkey sign-in attempts that did not sign in, per client address per `throttle.windowSeconds` (sign-in-throttle.ts). */
    maxFailuresPerIp: z.number().int().positive().default(100),
    /**
     * The same per IPv6 /48, across its /64s; ten times `maxFailuresPerIp` when not given. Each /64 gets a counter in
     * the never-evicted `throttle:` area the login throttle needs, so without it one /48 could fill that area.
     */
    maxFailuresPerNetwork: z.number().int().positive().optional(),
  })
  .transform(({ maxFailuresPerNetwork, ...rest }) => ({
    ...rest,
    maxFailuresPerNetwork: maxFailuresPerNetwork ?? NETWORK_MULTIPLE * rest.maxFailuresPerIp,
  }))
  .prefault({});

/**
 * The `passkeys` option as hosts write it (origins as in RFC 6454 §4).
 *
 * @example
 * createSentinel({ ..., passkeys: { offerRegistration: true, rpId: 'example.com', origins: ['https://id.example.com'] } })
 */
export type PasskeysOptions = z.input<typeof passkeysOptionsSchema>;

/** Who passkeys are made for and checked against. */
export interface RelyingParty {
  rpId: string;
  rpName: string;
  origins: string[];
}

/**
 * The relying party of a configuration.
 *
 * @example
 * const { rpId, origins } = relyingParty(context.config);
 */
export function relyingParty(config: {
  issuer: string;
  passkeys: z.output<typeof passkeysOptionsSchema>;
  branding: { productName: string };
}): RelyingParty {
  const { issuer, passkeys, branding } = config;
  const url = new URL(issuer);
  return {
    rpId: passkeys.rpId ?? url.hostname,
    rpName: passkeys.rpName ?? branding.productName,
    origins: passkeys.origins ?? [url.origin],
  };
}
