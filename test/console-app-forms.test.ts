/**
 * The operator console's page of one app offers only the forms that can succeed for it: "Rotate the secret" for an
 * app that has a client secret, not for a public client (`none`) nor one that signs its assertions
 * (`private_key_jwt`), whose rotation the console refuses whatever is posted.
 */
import { describe, expect, it } from 'vitest';
import { createConsole } from '../src/console/index.js';
import { createSentinel } from '../src/index.js';
import { consoleRequest, operatorCookie } from './helpers/console-session.js';
import { ACCOUNT, CLIENT_ID, PUBLIC_CLIENT_ID } from './helpers/fixtures.js';
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
