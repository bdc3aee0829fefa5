/**
 * Mounting helper for suites: builds a sentinel, mounts it on a host, and closes everything after each test.
 */
import { afterEach } from 'vitest';
import type { SentinelOptions } from '../../src/index.js';
import { createSentinel, type Sentinel } from '../../src/index.js';
import { baseOptions } from './fixtures.js';
import type { Host, MountedHost, MountOptions } from './host.js';

/** A sentinel mounted on a host. */
export interface Mounted extends MountedHost {
  sentinel: Sentinel;
}

/** Returns a `mount()` that closes every host it started after each test of the calling suite. */
export function useMount(host: Host): (overrides?: Partial<SentinelOptions>, options?: MountOptions) => Promise<Mounted> {
  const open: MountedHost[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((mounted) => mounted.close()));
  });
  return async (overrides = {}, options = {}) => {
    const sentinel = createSentinel(baseOptions(overrides));
    const mounted = await host.mount(sentinel, options);
    open.push(mounted);
    return { ...mounted, sentinel };
  };
}
