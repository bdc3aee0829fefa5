/**
 * Which peers are trusted proxies: the parsed form of the `trustProxy` option.
 *
 * The convention is Express's (`trust proxy`): the addresses a request passed through are the socket peer followed
 * by the `X-Forwarded-For` entries from right to left; each proxy appends the address it received the request
 * from, so only the right-hand part of the header was written by proxies you run, and everything left of it was
 * written by the client. The client address is therefore the right-most address that is not a trusted proxy.
 */
import { BlockList, isIP } from 'node:net';
import { ConfigurationError } from '../errors.js';

/**
 * The `trustProxy` option: `false` (the socket address), a number of proxy hops, a list of trusted proxy
 * addresses and CIDR ranges (plus the names `loopback`, `linklocal`, `uniquelocal`), or `true` (see README: the
 * left-most `X-Forwarded-For` entry, correct only behind a proxy that replaces the header).
 *
 * @example
 * const behindNginx: TrustProxy = ['127.0.0.1'];
 * const behindOneLoadBalancer: TrustProxy = 1;
 */
export type TrustProxy = boolean | number | readonly string[];

/** A compiled `trustProxy`: whether the address at `hop` (0 = the socket peer) is a trusted proxy. */
export type TrustsHop = (address: string, hop: number) => boolean;

/** RFC 1122 / RFC 4291 loopback, RFC 3927 / RFC 4291 link-local, RFC 1918 / RFC 4193 private ranges. */
const NAMED_RANGES: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/**
 * An address as written in a header or by the socket, or `null` when it is not an IP address. Drops brackets and
 * a port (`[2001:db8::1]:443`, `203.0.113.7:5000`) and unwraps IPv4-mapped IPv6 (`::ffff:203.0.113.7`), so one
 * client has one spelling in throttle keys.
 *
 * @example
 * normalizeAddress('::ffff:203.0.113.7') // '203.0.113.7'
 */
export function normalizeAddress(raw: string): string | null {
  let value = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed !== null) value = bracketed[1] as string;
  else if (/^[\d.]+:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(':'));
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(value);
  if (mapped !== null) value = mapped[1] as string;
  const version = isIP(value);
  if (version === 0) return null;
  return version === 6 ? value.toLowerCase() : value;
}

function addRange(list: BlockList, entry: string): boolean {
  const [address, bits, ...rest] = entry.split('/');
  if (address === undefined || rest.length > 0) return false;
  const normalized = normalizeAddress(address);
  if (normalized === null) return false;
  const type = isIP(normalized) === 4 ? 'ipv4' : 'ipv6';
  if (bits === undefined) {
    list.addAddress(normalized, type);
    return true;
  }
  const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  if (!(prefix >= 0 && prefix <= (type === 'ipv4' ? 32 : 128))) return false;
  list.addSubnet(normalized, prefix, type);
  return true;
}

/**
 * Compiles `trustProxy` into a per-hop check; `true` and `false` compile to `null` (no walk: see {@link clientIP}).
 *
 * @example
 * const trusts = compileTrustProxy(['10.0.0.0/8', 'loopback']);
 * trusts?.('10.1.2.3', 0) // true
 * @throws ConfigurationError naming `trustProxy` for a negative or fractional count or an unparsable address.
 */
export function compileTrustProxy(option: TrustProxy): TrustsHop | null {
  if (typeof option === 'boolean') return null;
  if (typeof option === 'number') {
    if (!Number.isInteger(option) || option < 0 || option > 64) {
      throw new ConfigurationError('trustProxy', 'a hop count must be an integer from 0 to 64');
    }
    return (_address, hop) => hop < option;
  }
  const list = new BlockList();
  for (const entry of option) {
    const ranges = NAMED_RANGES[entry] ?? [entry];
    for (const range of ranges) {
      if (typeof range !== 'string' || !addRange(list, range)) {
        throw new ConfigurationError(
          'trustProxy',
          `"${String(entry)}" is not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal`,
        );
      }
    }
  }
  return (address) => list.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
}
