/**
 * The delivery loop every service starts must not keep the service alive: a host (or a test file) that lets go of
 * a service gets its store, configuration and apps back. Before the loop reached its worker weakly, each service
 * ever created stayed in memory with its poll timer, about 330 kB apiece.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, it } from 'vitest';
import type { Sentinel } from '../src/index.js';
import { makeSentinel } from './helpers/fixtures.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let round = 0; round < 20 && ref.deref() !== undefined; round++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
  }
  return ref.deref() === undefined;
}

/** A service, and a weak reference to its configuration's onError: the service's loop would hold on to it. */
function service(): { sentinel: Sentinel; store: WeakRef<object> } {
  const onError = (): void => {};
  return { sentinel: makeSentinel({ onError }), store: new WeakRef(onError) };
}

it('a service nobody holds is collected with its configuration, its poll timer and all', async () => {
  const { store } = service();
  // Another service after it: something keeps the latest configuration alone (replaced by the next one); the
  // first must then be free.
  service();
  expect(await collected(store)).toBe(true);
});

it('a service that is held keeps its configuration and its delivery loop until close()', async () => {
  const { sentinel, store } = service();
  expect(await collected(store)).toBe(false);
  await sentinel.close();
});
