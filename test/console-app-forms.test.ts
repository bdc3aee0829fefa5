/**
 * The operator console's page of one app offers only the forms that can succeed for it: "Rotate the secret" for an
 * app that has a client secret, not for a public client (`none`) nor one that signs its assertions
 * (`private_key_jwt`), whose rotation the console refuses whatever is posted. A registration the registry cannot
 * save is refused as any change it cannot make (`unsupported`), not as the operator's invalid input.
 */
import { describe, expect, it } from 'vitest';
import type { AppStore } from '../src/apps/app.js';
import { createConsole } from '../src/console/index.js';
import { contextOf } from '../src/http/context.js';
import { createSentinel, type SentinelEvent } from '../src/index.js';
import { consoleRequest, operatorCookie } from './helpers/console-session.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, PUBLIC_CLIENT_ID } from './helpers/fixtures.js';
import { clientKey, KEYED_CLIENT_ID, keyedOptions } from './helpers/key-bound.js';

describe('console: the forms on an app’s page', () => {
  it('offer "Rotate the secret" for a client-secret app only; the others keep their other forms', async () => {
    const sentinel = createSentinel(keyedOptions(await clientKey()));
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const pageOf = async (clientId: string): Promise<string> =>
      (await operatorConsole.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps/${clientId}`, { cookie })))?.body ?? '';

    expect(await pageOf(CLIENT_ID)).toContain('/rotate-secret"');
    for (const [clientId, method] of [
      [PUBLIC_CLIENT_ID, 'none'],
      [KEYED_CLIENT_ID, 'private_key_jwt'],
    ]) {
      const page = await pageOf(clientId as string);
      expect(page).toContain(`<dd>${method}</dd>`);
      expect(page).not.toContain('/rotate-secret"');
      expect(page).toContain('/redirect-uris"');
      expect(page).toContain('/disable"');
      expect(page).toContain('/delete"');
    }
  });
});

describe('console: registering an app with a registry that cannot save one', () => {
  it('is refused as the registry cannot do it (reason unsupported), like every other change it cannot make', async () => {
    const events: SentinelEvent[] = [];
    const full = contextOf(makeSentinel()).apps;
    // A read-only registry: it finds, lists and knows accounts, and saves nothing.
    const readOnly: AppStore = {
      findApp: (accountId, clientId) => full.findApp(accountId, clientId),
      hasAccount: (accountId) => full.hasAccount(accountId),
      listApps: async (accountId) => (await full.listApps?.(accountId)) ?? [],
    };
    const sentinel = createSentinel({ ...baseOptions({ onEvent: (event) => events.push(event) }), apps: undefined, appStore: readOnly });
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const page = String((await operatorConsole.handle(consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie })))?.body);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] as string;
    const once = /name="once" value="([^"]+)"/.exec(page)?.[1] as string;
    const form = { csrf, once, name: 'Reports', redirect_uris: 'https://reports.example.com/cb', auth: 'client_secret_basic' };
    const answer = await operatorConsole.handle(consoleRequest('POST', `/console/${ACCOUNT}/apps`, { cookie, form }));
    expect(answer?.body).toContain('The application registry cannot do this.');
    expect(answer?.body).not.toContain('invalid option');
    expect(events.at(-1)).toMatchObject({ type: 'console.denied', reason: 'unsupported', operator: 'u-op' });
    const disabled = await operatorConsole.handle(
      consoleRequest('POST', `/console/${ACCOUNT}/apps/${CLIENT_ID}/disable`, { cookie, form: { csrf } }),
    );
    expect(answer?.status).toBe(disabled?.status);
    expect(events.at(-1)).toMatchObject({ type: 'console.denied', reason: 'unsupported' });
  });
});
