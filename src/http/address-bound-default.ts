/**
 * The default network limit of the per-address bounds (`http/address-bound.ts`), apart from them so that the option
 * schemas of `par/` and `device/` can derive it without importing the request path (which imports the config).
 */

/**
 * How many times its per-address limit one IPv6 /48 may make, across its /64s, when the host gives no network limit
 * (`par.publicPushesPerNetwork`, `deviceFlow.publicAuthorizationsPerNetwork`): the login throttle's ratio of
 * `maxFailuresPerNetwork` to `maxFailuresPerIp` (500 to 50). Room for a site whose many users share one /48, while a
 * /48 creates at most this many per-address limits' worth of counters per window, not one for each of its 65 536 /64s.
 *
 * @example const networkLimit = perNetwork ?? NETWORK_MULTIPLE * perAddress;
 */
export const NETWORK_MULTIPLE = 10;
