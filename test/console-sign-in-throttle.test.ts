/**
 * Starting a console sign-in counts against the client address's `interactionsPerAddress`, and one the bound refuses
 * changes nothing: no pending sign-in stored, and no console client registered in the account it named. The client
 * was saved before the bound was asked, so an anonymous visitor past the bound still wrote a registry entry (and an
 * `app.registered` audit event) into every account it named.
 */
import { describe, expect, it } from 'vitest';
import { createConsole } from '../src/console/index.js';
import { appFromInput } from '../src/apps/app-schema.js';
import { MemoryAppStore } from '../src/apps/memory-app-store.js';
import type { SentinelEvent, SentinelResponse } from '../src/index.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, OTHER_ACCOUNT, OTHER_CLIENT_ID } from './helpers/fixtures.js';

const IP = '203.0.113.9';

describe('console: a sign-in refused by the interaction bound', () => {
  it('answers 429 and registers no console client in the account it named', async () => {
    const events: SentinelEvent[] = [];
    // One app in each account, so the registry knows both.
    const apps = new MemoryAppStore(
      (baseOptions().apps ?? [])
        .filter((app) => app.clientId === CLIENT_ID || app.clientId === OTHER_CLIENT_ID)
        .map((app) => appFromInput(app, 'apps')),
    );
    const sentinel = makeSentinel({
      apps: [],
      appStore: apps,
      interactionsPerAddress: 1,
      onEvent: (event) => void events.push(event),
    });
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const start = async (account: string) =>
      (await operatorConsole.handle({
        method: 'GET',
        path: '/console/sign-in',
        query: new URLSearchParams({ account }),
        headers: {},
        ip: IP,
      })) as SentinelResponse;

    expect((await start(ACCOUNT)).status).toBe(303);
    expect(await apps.findApp(ACCOUNT, 'sentinel-console')).not.toBeNull();

    const refused = await start(OTHER_ACCOUNT);
    expect(refused.status).toBe(429);
    expect(refused.headers?.['retry-after']).toBeDefined();
    expect(await apps.findApp(OTHER_ACCOUNT, 'sentinel-console')).toBeNull();
    expect(events.filter((event) => event.type === 'app.registered' && event.accountId === OTHER_ACCOUNT)).toEqual([]);
  });
});
