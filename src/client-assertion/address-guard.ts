/**
 * The SSRF guard of outbound fetches made on a client's behalf (`jwks_uri`): the service must not become a proxy
 * into its own network. Loopback, private (RFC 1918, RFC 4193), link-local (cloud metadata at 169.254.169.254),
 * carrier-grade NAT, unspecified, multicast and reserved ranges are refused, for IPv4 and IPv6, and an IPv6 address
 * that embeds an IPv4 one (mapped, compatible, translated, NAT64, 6to4) is judged by that IPv4 address.
 */
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  // The deprecated 6to4 relay anycast prefix (RFC 7526): a relay may forward into any network.
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  // Site-local, deprecated (RFC 3879) but still routed inside some networks: as private as fc00::/7.
  ['fec0::', 10],
  ['ff00::', 8],
  // NAT64's well-known prefix is judged by the IPv4 address it embeds (DNS64 maps public hosts into it on
  // IPv6-only networks); the local-use prefix (RFC 8215) may translate into any network: refused whole.
  ['64:ff9b:1::', 48],
  // Teredo (RFC 4380) hides the IPv4 addresses it reaches (XOR-ed): refused whole.
  ['2001::', 32],
  // Benchmarking (RFC 5180, the twin of 198.18.0.0/15), documentation (RFC 3849 and RFC 9637), discard-only
  // (RFC 6666): never a public key set's home.
  ['2001:2::', 48],
  ['2001:db8::', 32],
  ['3fff::', 20],
  ['100::', 64],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/**
 * The 16 bytes of an IPv6 literal that `isIP` accepted: `::` expanded, a trailing dotted quad folded into the last
 * two groups, a zone (`%eth0`) dropped.
 */
function ipv6Bytes(address: string): number[] {
  let text = address.split('%')[0] as string;
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(2).map(Number) as [number, number, number, number];
    text = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const before = head === '' ? [] : head.split(':');
  const after = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [...before, ...Array<string>(8 - before.length - after.length).fill('0'), ...after];
  return groups.flatMap((group) => {
    const value = Number.parseInt(group, 16);
    return [value >> 8, value & 255];
  });
}

const zero = (bytes: number[], from: number, to: number): boolean => bytes.slice(from, to).every((byte) => byte === 0);
const dottedQuad = (bytes: number[], at: number): string => bytes.slice(at, at + 4).join('.');

/**
 * The IPv4 address an IPv6 address reaches, when it embeds one that a router or the host itself would use: an
 * IPv4-compatible (`::a.b.c.d`), IPv4-mapped (`::ffff:a.b.c.d`) or IPv4-translated (`::ffff:0:a.b.c.d`) address,
 * NAT64's well-known prefix (`64:ff9b::/96`, RFC 6052) or 6to4 (`2002::/16`, RFC 3056). Every spelling counts,
 * hexadecimal groups (`::ffff:7f00:1`, what a URL makes of `[::ffff:127.0.0.1]`) included.
 */
function embeddedIPv4(bytes: number[]): string | undefined {
  if (zero(bytes, 0, 10)) {
    const marker = (bytes[10] as number) * 256 + (bytes[11] as number);
    if (marker === 0 || marker === 0xffff) return dottedQuad(bytes, 12);
  }
  if (zero(bytes, 0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zero(bytes, 10, 12)) return dottedQuad(bytes, 12);
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(bytes, 4, 12)) return dottedQuad(bytes, 12);
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return dottedQuad(bytes, 2);
  return undefined;
}

/**
 * True when `address` (an IP literal) may not be fetched from.
 * @example isForbiddenAddress('169.254.169.254') // true
 */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 4) return blocked.check(address, 'ipv4');
  // An address that embeds an IPv4 one reaches that host: judge the host.
  const embedded = embeddedIPv4(ipv6Bytes(address));
  if (embedded !== undefined) return isForbiddenAddress(embedded);
  return blocked.check(address.split('%')[0] as string, 'ipv6');
}
