/**
 * `POST …/secret` keeps the previous secret working for `registration.secretOverlapSeconds`, so that every instance of
 * the application can switch over. A client whose secret leaked must be able to end it at once: the request may ask
 * for a shorter overlap (`previous_secret_expires_in`, 0 for none), never a longer one.
 */
import { describe, expect, it } from 'vitest';
import type { Sentinel } from '../src/index.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { appTokenPath, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';
import { INITIAL_ACCESS_TOKEN, manageClient, type Registered, registerClient } from './helpers/registration-client.js';

const OVERLAP = 3600;

function service(): Sentinel {
  return makeSentinel({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN, secretOverlapSeconds: OVERLAP } });
}

function clientCredentials(sentinel: Sentinel, info: Registered, secret: string) {
  return postForm(
    sentinel,
    appTokenPath(CONSUMER_UUID),
    new URLSearchParams({ grant_type: 'client_credentials', client_id: info.client_id, client_secret: secret }).toString(),
  );
}

describe('POST …/secret with previous_secret_expires_in', () => {
  it('0 ends the previous secret at once; the new one works', async () => {
    const sentinel = service();
    const info = await registerClient(sentinel, { grant_types: ['client_credentials'] });
    const leaked = info.client_secret as string;
    const rotated = await manageClient(sentinel, 'POST', info, { suffix: '/secret', body: { previous_secret_expires_in: 0 } });
    expect(rotated.status, rotated.body).toBe(200);
    expect(jsonOf(rotated).previous_secret_expires_at).toBeUndefined();
    expect(jsonOf(await clientCredentials(sentinel, info, leaked)).error).toBe('invalid_client');
    expect((await clientCredentials(sentinel, info, jsonOf(rotated).client_secret as string)).status).toBe(200);
  });

  it('a shorter overlap is kept as asked; no body, or null, keeps the configured one', async () => {
    const sentinel = service();
    const info = await registerClient(sentinel, { grant_types: ['client_credentials'] });
    const shortened = await manageClient(sentinel, 'POST', info, { suffix: '/secret', body: { previous_secret_expires_in: 60 } });
    expect(Math.abs((jsonOf(shortened).previous_secret_expires_at as number) - (Date.now() / 1000 + 60))).toBeLessThan(2);
    for (const body of [undefined, { previous_secret_expires_in: null }]) {
      const plain = await manageClient(sentinel, 'POST', info, { suffix: '/secret', body });
      expect(plain.status, plain.body).toBe(200);
      expect(Math.abs((jsonOf(plain).previous_secret_expires_at as number) - (Date.now() / 1000 + OVERLAP))).toBeLessThan(2);
    }
  });

  it.each([[OVERLAP + 1], [-1], [1.5], ['0']])('refuses %j with invalid_request and rotates nothing', async (value) => {
    const sentinel = service();
    const info = await registerClient(sentinel, { grant_types: ['client_credentials'] });
    const refused = await manageClient(sentinel, 'POST', info, { suffix: '/secret', body: { previous_secret_expires_in: value } });
    expect(refused.status).toBe(400);
    expect(jsonOf(refused)).toMatchObject({ error: 'invalid_request' });
    expect(jsonOf(refused).client_secret).toBeUndefined();
    expect((await clientCredentials(sentinel, info, info.client_secret as string)).status).toBe(200);
  });
});
