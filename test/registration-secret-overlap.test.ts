/**
 * `POST …/secret` keeps the previous secret working for `registration.secretOverlapSeconds`, so that every instance of
 * the application can switch over. A client whose secret leaked must be able to end it at once: the request may ask
 * for a shorter overlap (`previous_secret_expires_in`, 0 for none), never a longer one.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { Sentinel, SentinelRequest } from '../src/index.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { appTokenPath, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';
import { HOSTS } from './helpers/hosts.js';
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

/** A rotation request with no Content-Type header and the given body, as an adapter hands it over. */
function untyped(info: Registered, body: SentinelRequest['body']): SentinelRequest {
  return {
    method: 'POST',
    path: `${new URL(info.registration_client_uri).pathname}/secret`,
    query: new URLSearchParams(),
    headers: { host: 'localhost', authorization: `Bearer ${info.registration_access_token}` },
    body,
  };
}

const END_AT_ONCE = JSON.stringify({ previous_secret_expires_in: 0 });

describe('POST …/secret without a Content-Type', () => {
  // Deciding "no body" by the missing header alone answered 200 with the full overlap: the leaked secret kept working.
  it.each([
    ['text', END_AT_ONCE],
    ['bytes', new TextEncoder().encode(END_AT_ONCE)],
    ['read on demand', () => END_AT_ONCE],
  ] as const)('refuses a body handed over as %s and rotates nothing', async (_shape, body) => {
    const sentinel = service();
    const info = await registerClient(sentinel, { grant_types: ['client_credentials'] });
    const refused = await sentinel.handle(untyped(info, body));
    expect(refused?.status, refused?.body).toBe(400);
    expect(JSON.parse(refused?.body ?? '{}')).toEqual({
      error: 'invalid_client_metadata',
      error_description: 'Content-Type must be application/json',
    });
    expect((await clientCredentials(sentinel, info, info.client_secret as string)).status).toBe(200);
  });

  it.each([
    ['no body', undefined],
    ['an empty text', ''],
    ['no bytes', new Uint8Array()],
    ['a reader with nothing', () => undefined],
    ["a host parser's empty object", {}],
  ] as const)('keeps the configured overlap for %s', async (_shape, body) => {
    const sentinel = service();
    const info = await registerClient(sentinel, { grant_types: ['client_credentials'] });
    const rotated = await sentinel.handle(untyped(info, body));
    expect(rotated?.status, rotated?.body).toBe(200);
    const answer = JSON.parse(rotated?.body ?? '{}') as { previous_secret_expires_at: number };
    expect(Math.abs(answer.previous_secret_expires_at - (Date.now() / 1000 + OVERLAP))).toBeLessThan(2);
  });

  it.each(HOSTS.map((host) => [host.name, host] as const))('refuses it over HTTP through %s', async (_name, host) => {
    const sentinel = service();
    const info = await registerClient(sentinel, { grant_types: ['client_credentials'] });
    const mounted = await host.mount(sentinel);
    try {
      const path = `${new URL(info.registration_client_uri).pathname}/secret`;
      const refused = await request(mounted.server)
        .post(path)
        .set('authorization', `Bearer ${info.registration_access_token}`)
        .unset('content-type')
        .send(Buffer.from(END_AT_ONCE));
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body).toMatchObject({ error: 'invalid_client_metadata' });
      expect((await clientCredentials(sentinel, info, info.client_secret as string)).status).toBe(200);
      const empty = await request(mounted.server).post(path).set('authorization', `Bearer ${info.registration_access_token}`);
      expect(empty.status, empty.text).toBe(200);
    } finally {
      await mounted.close();
    }
  });
});
