/**
 * The delivery loop's stop signal lives as long as the service, and every attempt is cut off by it: what an attempt
 * hangs on it must go when the attempt is done. `AbortSignal.any([timeout, stop])` did not let go: on Node 20 each
 * signal it makes stays listed in the stop signal for good, so the service grew with every logout it delivered.
 */
import { getEventListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { postLogoutToken } from '../src/logout/post-logout-token.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/**
 * What `signal` keeps of the attempts made from it: its `abort` listeners, and the signals Node's `AbortSignal.any`
 * lists in it (an internal set, read by its symbol's name; a runtime without it keeps none there).
 */
function keptBy(signal: AbortSignal): number {
  const dependants = Object.getOwnPropertySymbols(signal).find((symbol) => symbol.description === 'kDependantSignals');
  const listed = dependants === undefined ? undefined : (signal as unknown as Record<symbol, { size?: number } | undefined>)[dependants];
  return getEventListeners(signal, 'abort').length + (listed?.size ?? 0);
}

it('an attempt done leaves nothing on the long-lived stop signal it was made with', async () => {
  const stop = new AbortController();
  // Refused by the address guard at once (loopback, no network): an attempt with its deadline all the same.
  for (let n = 0; n < 200; n++) {
    const outcome = await postLogoutToken('https://127.0.0.1/logout', 'eyJ.logout.token', {
      allowPrivateAddresses: false,
      signal: stop.signal,
    });
    expect(outcome.kind).toBe('refused');
  }
  expect(keptBy(stop.signal)).toBe(0);
});

it('the stop signal still cuts off an attempt under way', async () => {
  // An app that never answers: only the stop ends the attempt, well before its 5 s deadline.
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/logout`;
  const stop = new AbortController();
  const started = Date.now();
  setTimeout(() => stop.abort(), 100);
  const outcome = await postLogoutToken(uri, 'eyJ.logout.token', { allowPrivateAddresses: true, signal: stop.signal });
  expect(outcome).toEqual({ kind: 'retry', reason: 'the app did not answer in time' });
  expect(Date.now() - started).toBeLessThan(2000);
  expect(keptBy(stop.signal)).toBe(0);
});
