/**
 * A `node:dns/promises` whose lookups of names under blackhole.example never answer until the test settles them: a
 * name server that never replies, as anyone can make one for a host they name (a client ID metadata document, a key
 * set, a logout URI). Other names listed in `answers` resolve to the address given; the rest go to the real resolver.
 * Used from a `vi.mock` factory, since the mock must be in place before the service's modules load:
 *
 * @example
 * const dns = vi.hoisted(() => ({ calls: [] as string[], settle: [] as (() => void)[] }));
 * vi.mock('node:dns/promises', async (importOriginal) =>
 *   (await import('./helpers/blackhole-dns.js')).blackholeDns(await importOriginal(), dns, { localhost: '127.0.0.1' }),
 * );
 */
import type * as Dns from 'node:dns/promises';

/** What the test sees of the lookups: the hosts asked for, in order, and how to let each pending blackhole fail. */
export interface BlackholeLookups {
  calls: string[];
  settle: (() => void)[];
}

export function blackholeDns(
  actual: typeof Dns,
  state: BlackholeLookups,
  answers: Record<string, string>,
  options: { recordOnlyBlackholes?: boolean } = {},
): typeof Dns {
  const lookup = ((host: string, lookupOptions: object) => {
    const blackhole = host.endsWith('.blackhole.example');
    if (blackhole || options.recordOnlyBlackholes !== true) state.calls.push(host);
    const address = answers[host];
    if (address !== undefined) return Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);
    if (!blackhole) return actual.lookup(host, lookupOptions as never);
    return new Promise((_resolve, reject) => {
      state.settle.push(() => reject(Object.assign(new Error(`getaddrinfo EAI_AGAIN ${host}`), { code: 'EAI_AGAIN' })));
    });
  }) as typeof actual.lookup;
  return { ...actual, lookup, default: { ...actual, lookup } } as typeof Dns;
}

/** Lets every blackhole lookup fail, and those that start meanwhile (waiters given a slot), until none is left. */
export async function settleAllLookups(state: BlackholeLookups): Promise<void> {
  while (state.settle.length > 0) {
    for (const settle of state.settle.splice(0)) settle();
    await new Promise((resolve) => setImmediate(resolve));
  }
}
