/**
 * The client address used for login throttling and audit events.
 *
 * RFC 9700 §4.13: `X-Forwarded-For` is set by whoever sends the request, so it is believed only as far as the
 * operator says proxies they run sit in front (`trustProxy`). Each proxy appends the address it received the
 * request from, so the client address is the right-most one that is not a trusted proxy; entries further left were
 * written by the client and are never used. Without `trustProxy` the socket address the host saw is used.
 */
import type { ResolvedConfig } from '../config.js';
import type { SentinelRequest } from './messages.js';
import { compileTrustProxy, normalizeAddress, type TrustProxy, type TrustsHop } from './trusted-proxies.js';

/** Compiled once per option value: the option object of a sentinel does not change. */
const compiled = new WeakMap<object, TrustsHop | null>();

function trustsHop(option: TrustProxy): TrustsHop | null {
  if (typeof option !== 'object') return compileTrustProxy(option);
  let found = compiled.get(option);
  if (found === undefined) {
    found = compileTrustProxy(option);
    compiled.set(option, found);
  }
  return found;
}

function forwardedFor(request: SentinelRequest): string[] {
  const value = request.headers['x-forwarded-for'];
  const joined = Array.isArray(value) ? value.join(',') : (value ?? '');
  return joined
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/**
 * The client's IP address, or `null` when neither the host nor a trusted proxy tells it (RFC 9700 §4.13).
 *
 * - `trustProxy: false`: the socket address.
 * - a hop count or an address list: walking from the socket peer leftwards through `X-Forwarded-For`, the first
 *   address that is not a trusted proxy (or the left-most one when all are trusted).
 * - `true`: the left-most `X-Forwarded-For` entry, for a proxy that replaces the header with the one address it saw.
 *
 * @example
 * const ip = clientIP(context.config, request) ?? 'unknown';
 */
export function clientIP(config: Pick<ResolvedConfig, 'trustProxy'>, request: SentinelRequest): string | null {
  const socket = request.ip === undefined ? null : normalizeAddress(request.ip);
  const option = config.trustProxy;
  if (option === false) return socket;
  if (option === true) {
    const first = forwardedFor(request)[0];
    return first === undefined ? socket : normalizeAddress(first);
  }
  const trusts = trustsHop(option);
  if (trusts === null || socket === null) return socket;
  const hops = [socket, ...forwardedFor(request).reverse()];
  for (let hop = 0; hop < hops.length; hop += 1) {
    const address = normalizeAddress(hops[hop] as string);
    // An entry a trusted proxy wrote that is not an address: no address is known, rather than a made-up one.
    if (address === null) return null;
    if (!trusts(address, hop) || hop === hops.length - 1) return address;
  }
  return socket;
}

/**
 * Whether the socket peer `ip` is a proxy the operator runs, so that the `X-Forwarded-*` headers it sent may be
 * believed: `true` trusts every peer (as {@link clientIP} does), `false` none; a hop count or an address list is
 * asked about the peer as hop 0. An unknown peer is not trusted (fail closed).
 * @example if (trustsPeer(context.config, request.ip)) host = request.headers['x-forwarded-host'];
 */
export function trustsPeer(config: Pick<ResolvedConfig, 'trustProxy'>, ip: string | undefined): boolean {
  const option = config.trustProxy;
  if (typeof option === 'boolean') return option;
  const peer = ip === undefined ? null : normalizeAddress(ip);
  if (peer === null) return false;
  return trustsHop(option)?.(peer, 0) === true;
}

/**
 * The counting unit of an address: IPv4 as is, IPv6 by its /64 (one subscriber usually holds a whole /64, so
 * counting single IPv6 addresses would bound nothing): the per-address login throttle and the DPoP proof quota.
 * @example addressBucket('2001:db8:1:2::7') // '2001:db8:1:2'
 */
export function addressBucket(address: string): string {
  if (!address.includes(':')) return address;
  const [head = '', tail] = address.toLowerCase().split('::', 2) as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':');
}

/**
 * The wider network of an IPv6 address, its /48 (a site's usual assignment, 65 536 /64s), or `null` for IPv4: the
 * login throttle bounds how many new username counters one network creates (`throttle.maxFailuresPerNetwork`).
 * @example networkBucket('2001:db8:1:2::7') // '2001:db8:1'
 */
export function networkBucket(address: string): string | null {
  if (!address.includes(':')) return null;
  return addressBucket(address).split(':').slice(0, 3).join(':');
}
