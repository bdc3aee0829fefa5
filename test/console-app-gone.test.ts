/**
 * An app deleted by someone else while an operator's change to it was on its way (between the console's read of the
 * registry and its write): the change finds no app to write. The console must say so, with nothing announced: no
 * `app.updated` nor `console.changed` for a change that was never made, and no "done".
 */
import { describe, expect, it } from 'vitest';
import type { App, AppChange, AppPatch } from '../src/apps/app.js';
import { createConsole } from '../src/console/index.js';
import { tapEvents } from '../src/events/event-taps.js';
import { contextOf } from '../src/http/context.js';
import type { SentinelEvent } from '../src/index.js';
import { consoleRequest, operatorCookie } from './helpers/console-session.js';
import { ACCOUNT, CLIENT_ID, makeSentinel } from './helpers/fixtures.js';

describe('console: an app deleted while its change was on its way', () => {
  it('refuses the redirect URIs change as an unknown app, and announces no change', async () => {
    const sentinel = makeSentinel();
    const apps = contextOf(sentinel).apps;
    const patch = apps.patchApp?.bind(apps);
    // Another operator (or the CLI) deletes the app just before this write reaches the registry.
    apps.patchApp = async (accountId: string, clientId: string, update: (current: App) => AppPatch, change?: AppChange) => {
      await apps.deleteApp?.(accountId, clientId, { actor: 'cli' });
      return (await patch?.(accountId, clientId, update, change)) ?? null;
    };
    const events: SentinelEvent[] = [];
    tapEvents(sentinel.config, (seen) => events.push(seen));
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const page = await operatorConsole.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps/${CLIENT_ID}`, { cookie }));
    const csrf = /name="csrf" value="([^"]+)"/.exec(page?.body ?? '')?.[1] ?? '';
    const changed = await operatorConsole.handle(
      consoleRequest('POST', `/console/${ACCOUNT}/apps/${CLIENT_ID}/redirect-uris`, {
        cookie,
        form: { csrf, redirect_uris: 'https://app.example.com/moved' },
      }),
    );
    expect(changed?.status).toBe(404);
    expect(changed?.headers.location).toBeUndefined();
    expect(events.filter((seen) => seen.type === 'app.updated' || seen.type === 'console.changed')).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'console.denied', reason: 'unknown_app', target: CLIENT_ID, operator: 'u-op' });
  });
});
