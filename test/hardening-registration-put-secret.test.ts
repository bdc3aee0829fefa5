/**
 * RFC 7592 §2.2: a `client_secret` in an update must be the client's current one. A secret rotated out but still
 * inside its overlap window keeps authenticating token requests (that is what the overlap is for), yet it no longer
 * vouches for an update of the registration — on the in-memory registry and on PostgreSQL alike.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Sentinel } from '../src/index.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { appTokenPath, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';
import { describeOnPostgres } from './helpers/postgres-suite.js';
import { INITIAL_ACCESS_TOKEN, manageClient, type Registered, registerClient } from './helpers/registration-client.js';

function clientCredentials(sentinel: Sentinel, info: Registered, secret: string) {
  return postForm(
    sentinel,
    appTokenPath(CONSUMER_UUID),
    new URLSearchParams({ grant_type: 'client_credentials', client_id: info.client_id, client_secret: secret }).toString(),
  );
}

function checks(name: string, sentinelOf: () => Sentinel) {
  it(`${name}: a rotated-out secret inside its overlap cannot authorise a PUT; the current one can`, async () => {
    const sentinel = sentinelOf();
    const info = await registerClient(sentinel, { grant_types: ['client_credentials'], client_name: 'Before' });
    const old = info.client_secret as string;
    const rotated = await manageClient(sentinel, 'POST', info, { suffix: '/secret' });
    expect(rotated.status, rotated.body).toBe(200);
    const current = jsonOf(rotated).client_secret as string;
    // The overlap is running: the old secret still gets tokens.
    expect((await clientCredentials(sentinel, info, old)).status).toBe(200);

    const body = (secret: string, clientName: string) => ({
      client_id: info.client_id,
      client_secret: secret,
      grant_types: ['client_credentials'],
      client_name: clientName,
    });
    const refused = await manageClient(sentinel, 'PUT', info, { body: body(old, 'With the old secret') });
    expect(refused.status, refused.body).toBe(400);
    expect(jsonOf(refused)).toMatchObject({ error: 'invalid_client_metadata' });
    expect(jsonOf(await manageClient(sentinel, 'GET', info)).client_name).toBe('Before');

    const accepted = await manageClient(sentinel, 'PUT', info, { body: body(current, 'With the current secret') });
    expect(accepted.status, accepted.body).toBe(200);
    expect(jsonOf(accepted).client_name).toBe('With the current secret');
    // Refusing the PUT took nothing from the overlap.
    expect((await clientCredentials(sentinel, info, old)).status).toBe(200);
  });
}

describe('RFC 7592 update with client_secret', () => {
  checks('in memory', () => makeSentinel({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN, secretOverlapSeconds: 3600 } }));
});

await describeOnPostgres('hardening-registration-put-secret', 'RFC 7592 update with client_secret on PostgreSQL', (registry) => {
  let sentinel: Sentinel;

  beforeAll(() => {
    sentinel = makeSentinel({
      apps: [],
      appStore: registry().store,
      registration: { initialAccessToken: INITIAL_ACCESS_TOKEN, secretOverlapSeconds: 3600 },
    });
  });

  checks('PostgreSQL', () => sentinel);
});
