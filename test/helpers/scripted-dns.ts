/**
 * A `node:dns/promises` whose `lookup` answers scripted addresses for chosen host names and resolves every other
 * name as usual: the address guard's lookup then sends a name wherever a test says (and can move it between two
 * attempts). A test file mocks the module with it and scripts names through {@link resolved}:
 *
 * @example
 * vi.mock('node:dns/promises', async (original) => (await import('./helpers/scripted-dns.js')).scriptedDns(original));
 * const { resolved } = await import('./helpers/scripted-dns.js');
 * resolved.set('logout.example', [{ address: '127.0.0.1', family: 4 }]);
 */
type DnsPromises = typeof import('node:dns/promises');

/** Host name → the addresses its lookup answers. */
export const resolved = new Map<string, { address: string; family: number }[]>();

/** The mocked module, built on the real one (`importOriginal` of vi.mock's factory). */
export async function scriptedDns(importOriginal: () => Promise<unknown>): Promise<DnsPromises> {
  const actual = (await importOriginal()) as DnsPromises;
  const lookup = ((host: string, options: object) => {
    const scripted = resolved.get(host);
    return scripted === undefined ? actual.lookup(host, options) : Promise.resolve(scripted);
  }) as DnsPromises['lookup'];
  return { ...actual, default: { ...actual, lookup }, lookup } as DnsPromises;
}
