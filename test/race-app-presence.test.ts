/**
 * The bearer guard's memory of which apps exist, against a deletion that lands while a lookup is in flight (issue
 * 30, the read-await-act review). The lookup found the app, the deletion forgot it here, then the lookup remembered
 * it as present: on this instance the deleted app's tokens passed for the whole presence TTL instead of at once.
 */
import { describe, expect, it } from 'vitest';
import { appPresence } from '../src/guard/app-presence.js';
import type { App } from '../src/apps/app.js';
import type { SentinelContext } from '../src/http/context.js';
import { MemoryAppStore } from '../src/apps/memory-app-store.js';

const APP: App = {
  accountId: '123456',
  clientId: 'c-race',
  clientSecretHash: undefined,
  redirectUris: ['https://app.example.com/cb'],
  grantTypes: ['authorization_code'],
  tokenEndpointAuthMethod: 'none',
} as App;

describe('app presence: a deletion during a lookup', () => {
  it('is not undone by the lookup that found the app before it (20 rounds)', async () => {
    for (let round = 0; round < 20; round += 1) {
      const store = new MemoryAppStore([{ ...APP }]);
      let inLookup: (() => void) | undefined;
      const reached = new Promise<void>((resolve) => {
        inLookup = resolve;
      });
      let release: (() => void) | undefined;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      const apps = {
        findApp: async (accountId: string, clientId: string) => {
          const found = store.findApp(accountId, clientId);
          inLookup?.();
          await released;
          return found;
        },
        hasAccount: (accountId: string) => store.hasAccount(accountId),
      };
      const presence = appPresence({ apps } as unknown as SentinelContext);
      const lookup = presence.isGone(APP.accountId, APP.clientId);
      await reached;
      // The deletion through this instance: the registry forgets the app, and so does the guard.
      store.deleteApp(APP.accountId, APP.clientId);
      presence.forget(APP.accountId, APP.clientId);
      release?.();
      // The lookup started before the deletion: it may answer "present" for its own request...
      expect(await lookup).toBe(false);
      // ...but must not leave the deleted app remembered as present.
      expect(presence.isKnownPresent(APP.accountId, APP.clientId), 'the deleted app is remembered as present').toBe(false);
      expect(await presence.isGone(APP.accountId, APP.clientId)).toBe(true);
    }
  });

  it('still remembers an app found with no deletion in between', async () => {
    const store = new MemoryAppStore([{ ...APP }]);
    const presence = appPresence({ apps: store } as unknown as SentinelContext);
    expect(await presence.isGone(APP.accountId, APP.clientId)).toBe(false);
    expect(presence.isKnownPresent(APP.accountId, APP.clientId)).toBe(true);
  });
});
