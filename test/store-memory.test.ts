import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../src/stores/memory.js';
import { entryBytes } from '../src/stores/memory-size.js';
import { movableClock } from './helpers/clock.js';
import { runStoreContract } from './helpers/store-contract.js';

// The MemoryStore times its TTLs by this process's clock: the expiry checks move it rather than sleep.
runStoreContract(
  'MemoryStore',
  async () => {
    const clock = movableClock();
    return { store: new MemoryStore(), cleanup: async () => clock.restore(), wait: (ms) => clock.advance(ms) };
  },
  { movesClock: true },
);

describe('MemoryStore specifics', () => {
  it('bounds each key prefix separately, so a flood of interactions cannot evict sessions', async () => {
    const store = new MemoryStore({ max: 100 });
    for (let i = 0; i < 50; i++) await store.set(`session:${i}`, `s${i}`, 60_000);
    for (let i = 0; i < 1000; i++) await store.set(`interaction:${i}`, `i${i}`, 60_000);

    for (let i = 0; i < 50; i++) await expect(store.get(`session:${i}`)).resolves.toBe(`s${i}`);
    let interactions = 0;
    for (let i = 0; i < 1000; i++) if ((await store.get(`interaction:${i}`)) !== null) interactions++;
    expect(interactions).toBeGreaterThan(0);
    expect(interactions).toBeLessThanOrEqual(100);
    // The survivors are the most recent ones: least recently used go first.
    await expect(store.get('interaction:999')).resolves.toBe('i999');
    await expect(store.get('interaction:0')).resolves.toBeNull();
    expect(store.size).toBe(50 + interactions);
    expect(store.size).toBeLessThanOrEqual(150);
  });

  it('refuses a swap whose security area is full before it writes any of its keys', async () => {
    const store = new MemoryStore({ securityMaxBytes: 4_000, securityPrefixes: ['grant', 'marker'] });
    await store.set('marker:old', 'x'.repeat(1_500), 60_000);
    const swap = store.swap([
      { key: 'grant:{g}', expect: null, value: 'g', ttlMs: 60_000 },
      { key: 'session:s', expect: null, value: 's', ttlMs: 60_000 },
      { key: 'marker:{g}', expect: null, value: 'y'.repeat(1_000), ttlMs: 60_000 },
    ]);
    await expect(swap).rejects.toThrow(/"marker:" is full/);
    expect(await store.get('grant:{g}')).toBeNull();
    expect(await store.get('session:s')).toBeNull();
    // Two writes to one area count together: each fits alone, both do not.
    await expect(
      store.swap([
        { key: 'grant:{a}', expect: null, value: 'a'.repeat(1_200), ttlMs: 60_000 },
        { key: 'grant:{b}', expect: null, value: 'b'.repeat(1_200), ttlMs: 60_000 },
      ]),
    ).rejects.toThrow(/"grant:" is full/);
    expect(await store.get('grant:{a}')).toBeNull();
    expect(await store.swap([{ key: 'grant:{g}', expect: null, value: 'g', ttlMs: 60_000 }])).toBe(true);
  });

  it('never gives a counter that expires while a full area makes room a life without end', async () => {
    // lru-cache times TTLs by performance.now(); this clock stands still, or moves 1 ms per reading once `ticking`.
    let now = 1_000;
    let ticking = false;
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => (ticking ? now++ : now));
    try {
      const key = 'throttle:ip:203.0.113.7';
      const other = 'throttle:ip:198.51.100.9';
      // Room for exactly the two counters: the next write must make room by dropping what has expired.
      const store = new MemoryStore({ securityMaxBytes: entryBytes(key, '10') + entryBytes(other, '1') });
      await store.increment(other, 3_600_000);
      for (let i = 0; i < 9; i++) await store.increment(key, 100); // window ends after 1 100
      now = 1_100;
      ticking = true; // the increment reads the counter live (1 100), and it has expired when room is made
      await store.increment(key, 100);
      ticking = false;
      now = 10_000_000;
      // Past its window the counter is gone, whichever way the race went; it never stays for good.
      expect(await store.get(key)).toBeNull();
    } finally {
      clock.mockRestore();
    }
  });

  it('refuses to count a value that is no count without quoting its key (addresses, user ids) in the error', async () => {
    const store = new MemoryStore();
    for (const key of ['throttle:ip:203.0.113.77', 'totp-used:u-alice:5837291']) {
      await store.set(key, 'not-a-count', 60_000);
      for (const [operation, count] of [
        ['increment', () => store.increment(key, 60_000)],
        ['decrement', () => store.decrement(key)],
      ] as const) {
        const error = await count().then(
          () => undefined,
          (failure: unknown) => failure as Error,
        );
        expect(error?.message).toBe(`MemoryStore: ${operation} found a value that is not a counter`);
        expect(error?.message).not.toMatch(/203\.0\.113|u-alice|throttle:|totp-used:/);
      }
    }
  });

  it('bounds keys without a prefix too', async () => {
    const store = new MemoryStore({ max: 10 });
    for (let i = 0; i < 100; i++) await store.set(`plain${i}`, 'v', 60_000);
    expect(store.size).toBeLessThanOrEqual(10);
  });

  it('refuses an entry larger than the maxBytes of its prefix instead of reporting a write it dropped', async () => {
    const store = new MemoryStore({ maxBytes: 10_000 });
    await store.set('code:{g}', 'code', 60_000);
    await store.set('grant:{g}', 'old', 60_000);
    const large = 'n'.repeat(6_000);
    const swap = store.swap([
      { key: 'code:{g}', expect: 'code', value: null },
      { key: 'grant:{g}', expect: 'old', value: large, ttlMs: 60_000 },
    ]);
    await expect(swap).rejects.toThrow(/a 12\d{3}-byte entry of "grant:" exceeds maxBytes \(10000\)/);
    // Nothing changed: the code is not spent, the grant is as it was.
    await expect(store.get('code:{g}')).resolves.toBe('code');
    await expect(store.get('grant:{g}')).resolves.toBe('old');
    await expect(store.set('grant:{g}', large, 60_000)).rejects.toThrow(/exceeds maxBytes/);
    await expect(store.get('grant:{g}')).resolves.toBe('old');
    // The largest entry that fits is kept.
    const fits = 'f'.repeat((10_000 - entryBytes('grant:{g}', '')) / 2);
    await store.set('grant:{g}', fits, 60_000);
    await expect(store.get('grant:{g}')).resolves.toBe(fits);
  });

  it('rejects a max that is not a positive integer', () => {
    for (const max of [0, -1, 1.5, Number.NaN]) expect(() => new MemoryStore({ max })).toThrow(TypeError);
  });

  // docs/ARCHITECTURE.md's stored-records table is the one list of what the service keeps: a prefix it marks as
  // security state that the default MemoryStore evicts anyway would fail open under a flood of its keys.
  it('never evicts a key of any prefix the stored-records table marks as security state', async () => {
    const table = readFileSync(new URL('../docs/ARCHITECTURE.md', import.meta.url), 'utf8');
    const prefixes = new Set<string>();
    for (const row of table.split('\n')) {
      const cells = row.split(' | ');
      const key = /^\| `([a-z-]+):/.exec(row)?.[1];
      if (key !== undefined && cells.length >= 6 && cells[4]?.startsWith('**yes**')) prefixes.add(key);
    }
    expect(prefixes).toContain('throttle');
    expect(prefixes).toContain('user-sessions');
    for (const prefix of prefixes) {
      const store = new MemoryStore({ max: 2 });
      for (let i = 0; i < 10; i++) await store.set(`${prefix}:${i}`, '1', 60_000);
      const kept = await Promise.all(Array.from({ length: 10 }, (_, i) => store.get(`${prefix}:${i}`)));
      expect({ prefix, evicted: kept.filter((value) => value === null).length }).toEqual({ prefix, evicted: 0 });
    }
  });
});
