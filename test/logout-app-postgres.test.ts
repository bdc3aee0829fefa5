/**
 * The back-channel logout fields in the PostgreSQL registry: registered over RFC 7591 and by `registerApp()`, read
 * back from the row (a fresh store, no cache), replaced and cleared over RFC 7592.
 */
import { beforeAll, expect, it } from 'vitest';
import type { Sentinel } from '../src/index.js';
import { PostgresAppStore } from '../src/postgres/index.js';
import { jsonOf } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { describeOnPostgres } from './helpers/postgres-suite.js';
import { INITIAL_ACCESS_TOKEN, manageClient, registerClient } from './helpers/registration-client.js';

await describeOnPostgres('logout-app-postgres', 'back-channel logout fields on PostgreSQL', (registry) => {
  let sentinel: Sentinel;
  beforeAll(() => {
    sentinel = makeSentinel({ apps: [], appStore: registry().store, registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
  });

  async function fromRow(clientId: string) {
    const fresh = new PostgresAppStore({ connectionString: registry().url, cache: false });
    try {
      return await fresh.findApp(ACCOUNT, clientId);
    } finally {
      await fresh.close();
    }
  }

  it('keeps backchannel_logout_uri and backchannel_logout_session_required through register, update and clear', async () => {
    const body = { redirect_uris: ['https://rp.example.com/cb'], grant_types: ['authorization_code'] };
    const info = await registerClient(sentinel, {
      ...body,
      backchannel_logout_uri: 'https://rp.example.com/logout',
      backchannel_logout_session_required: false,
    });
    expect(await fromRow(info.client_id)).toMatchObject({
      backchannelLogoutUri: 'https://rp.example.com/logout',
      backchannelLogoutSessionRequired: false,
    });
    const updated = await manageClient(sentinel, 'PUT', info, {
      body: { ...body, client_id: info.client_id, backchannel_logout_uri: 'https://rp.example.com/bye' },
    });
    expect(updated.status, updated.body).toBe(200);
    expect(jsonOf(updated).backchannel_logout_session_required).toBe(true);
    const row = await fromRow(info.client_id);
    expect(row?.backchannelLogoutUri).toBe('https://rp.example.com/bye');
    expect(row?.backchannelLogoutSessionRequired).toBeUndefined();
    await manageClient(sentinel, 'PUT', info, { body: { ...body, client_id: info.client_id } });
    expect((await fromRow(info.client_id))?.backchannelLogoutUri).toBeUndefined();
  });

  it('keeps the fields of registerApp()', async () => {
    const { app } = await sentinel.registerApp({
      accountId: ACCOUNT,
      redirectUris: ['https://rp.example.com/cb'],
      backchannelLogoutUri: 'https://rp.example.com/logout',
      backchannelLogoutSessionRequired: true,
    });
    expect(await fromRow(app.clientId)).toMatchObject({
      backchannelLogoutUri: 'https://rp.example.com/logout',
      backchannelLogoutSessionRequired: true,
    });
  });
});
