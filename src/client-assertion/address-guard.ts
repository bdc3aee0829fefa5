/**
 * The SSRF guard of outbound fetches made on a client's behalf (`jwks_uri`): the service must not become a proxy
 * into its own network. Loopback, private (RFC 1918, RFC 4193), link-local (cloud metadata at 169.254.169.254),
 * carrier-grade NAT, unspecified, multicast and reserved ranges are refused, for IPv4, IPv6 and IPv4-mapped IPv6.
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
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['2001:db8::', 32],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/**
 * True when `address` (an IP literal) may not be fetched from.
 * @example isForbiddenAddress('169.254.169.254') // true
 */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 6) {
    // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible forms reach IPv4 hosts: judge the embedded address.
    const mapped = /^(?:::ffff:|::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped !== null) return isForbiddenAddress(mapped[1] as string);
    const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
    if (hexMapped !== null) {
      const high = Number.parseInt(hexMapped[1] as string, 16);
      const low = Number.parseInt(hexMapped[2] as string, 16);
      return isForbiddenAddress(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
    }
    return blocked.check(address, 'ipv6');
  }
  return blocked.check(address, 'ipv4');
}
