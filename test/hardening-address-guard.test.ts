/**
 * The `jwks_uri` address guard (src/client-assertion/address-guard.ts) judges an IPv6 address that embeds an IPv4
 * one by that IPv4 address, in every spelling: IPv4-compatible, IPv4-mapped (dotted or hexadecimal, expanded or
 * not), IPv4-translated, NAT64's well-known prefix and 6to4. A URL turns `[::127.0.0.1]` into `[::7f00:1]`, which is
 * what the guard sees.
 */
import { describe, expect, it } from 'vitest';
import { isForbiddenAddress } from '../src/client-assertion/address-guard.js';
import { postForm } from './helpers/direct-flow.js';
import { appTokenPath } from './helpers/fixtures.js';
import { assertionAuth, clientKey, keyedSentinel } from './helpers/key-bound.js';

/** Refused IPv4 hosts, each written in the IPv6 forms that reach it. */
const REFUSED: string[] = [
  // 127.0.0.1, loopback
  '::127.0.0.1',
  '::7f00:1',
  '0:0:0:0:0:0:7f00:1',
  '::ffff:127.0.0.1',
  '::FFFF:127.0.0.1',
  '::ffff:7f00:1',
  '0:0:0:0:0:ffff:7f00:1',
  '0::ffff:127.0.0.1',
  '::ffff:0:127.0.0.1',
  '::ffff:0:7f00:1',
  '64:ff9b::127.0.0.1',
  '64:ff9b::7f00:1',
  '2002:7f00:1::',
  '2002:7f00:0001:1234::1',
  // 169.254.169.254, cloud metadata
  '::169.254.169.254',
  '::a9fe:a9fe',
  '::ffff:a9fe:a9fe',
  '64:ff9b::a9fe:a9fe',
  '2002:a9fe:a9fe::',
  // 10.0.0.1 and 192.168.1.1, private
  '::a00:1',
  '::ffff:10.0.0.1',
  '64:ff9b::10.0.0.1',
  '2002:c0a8:101::1',
  // 0.0.0.0
  '::ffff:0:0',
  '64:ff9b::',
  // local-use NAT64 (RFC 8215) and Teredo: where they lead cannot be judged
  '64:ff9b:1::5db8:d822',
  '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  // deprecated site-local (RFC 3879) and the 6to4 relay anycast prefix (RFC 7526)
  'fec0::1',
  '192.88.99.1',
  '::ffff:192.88.99.1',
  // IPv6 benchmarking, documentation and discard-only ranges, refused like their IPv4 twins
  '2001:2::1',
  '2001:db8::1',
  '3fff::1',
  '3fff:fff:ffff::1',
  '100::1',
];

/** Public hosts, directly and through the same forms. */
const ALLOWED: string[] = [
  '93.184.216.34',
  '::ffff:93.184.216.34',
  '::ffff:5db8:d822',
  '64:ff9b::93.184.216.34',
  '64:ff9b::5db8:d822',
  '2002:5db8:d822::1',
  '2606:2800:220:1:248:1893:25c8:1946',
  // Just outside the ranges above
  '2001:3::1',
  '3fff:1000::1',
  '100:0:0:1::1',
];

describe('isForbiddenAddress', () => {
  it.each(REFUSED)('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(ALLOWED)('allows %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('a jwks_uri at an IPv6 literal embedding a refused IPv4 address', () => {
  // Written as a URL keeps them ([::127.0.0.1] is [::7f00:1] to a URL parser), as a resolver could answer them too.
  it.each(['https://[::7f00:1]/jwks', 'https://[::ffff:7f00:1]/jwks', 'https://[64:ff9b::a9fe:a9fe]/jwks', 'https://[2002:7f00:1::]/jwks'])(
    '%s is refused before any connection, with invalid_client',
    async (jwksUri) => {
      const key = await clientKey();
      const sentinel = keyedSentinel(
        key,
        { jwks: undefined, jwksUri },
        { clientJwks: { timeoutMs: 500, maxBytes: 65_536, cacheSeconds: 300, allowPrivateAddresses: false } },
      );
      const response = await postForm(
        sentinel,
        appTokenPath(),
        new URLSearchParams({ grant_type: 'client_credentials', ...(await assertionAuth(key)) }).toString(),
      );
      expect(response.status).toBe(401);
      const body = JSON.parse(response.body as string) as Record<string, unknown>;
      expect(body.error).toBe('invalid_client');
      expect(body.error_description).toMatch(/private, loopback or link-local/);
    },
  );
});
