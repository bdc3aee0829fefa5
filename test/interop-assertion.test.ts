/**
 * `private_key_jwt` as common client libraries send it: rack-oauth2 and Authlib set `aud` to the URL they post to
 * (the v2 endpoint's carries the consumer in its query), and Authlib signs assertions that live an hour.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelOptions } from '../src/index.js';
import { ACCOUNT, CONSUMER_UUID } from './helpers/fixtures.js';
import { advanceClock } from './helpers/clock.js';
import { ACCOUNT_ISSUER, assertionAuth, clientKey, keyedSentinel, type ClientKey } from './helpers/key-bound.js';

const V2_PATH = `/sentinel/api/v2/account/${ACCOUNT}/app/token`;
const V2_URL = `http://localhost${V2_PATH}?state=${CONSUMER_UUID}`;
const TOKEN_PATH = `/sentinel/api/account/${ACCOUNT}/token`;

afterEach(() => {
  vi.restoreAllMocks();
});

async function post(sentinel: Sentinel, path: string, query: string, form: Record<string, string>) {
  const response = await sentinel.handle({
    method: 'POST',
    path,
    query: new URLSearchParams(query),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...form }).toString(),
  });
  return { status: response?.status, body: JSON.parse(response?.body ?? '{}') as Record<string, unknown> };
}

function v2(sentinel: Sentinel, form: Record<string, string>, state = CONSUMER_UUID) {
  return post(sentinel, V2_PATH, `state=${state}`, form);
}

async function setup(overrides: Partial<SentinelOptions> = {}): Promise<{ key: ClientKey; sentinel: Sentinel }> {
  const key = await clientKey();
  return { key, sentinel: keyedSentinel(key, {}, overrides) };
}

describe('client assertion audience: the URL the client posts to, query included', () => {
  it('accepts aud = the v2 consumer endpoint URL with its state query', async () => {
    const { key, sentinel } = await setup();
    const response = await v2(sentinel, await assertionAuth(key, { aud: V2_URL }));
    expect(response.status).toBe(200);
    expect(typeof response.body.access_token).toBe('string');
  });

  it('accepts aud as an array holding that URL', async () => {
    const { key, sentinel } = await setup();
    expect((await v2(sentinel, await assertionAuth(key, { aud: ['https://elsewhere.example', V2_URL] }))).status).toBe(200);
  });

  it('still accepts the bare endpoint URL, the issuer and the token endpoint', async () => {
    const { key, sentinel } = await setup();
    expect((await v2(sentinel, await assertionAuth(key, { aud: `http://localhost${V2_PATH}` }))).status).toBe(200);
    expect((await v2(sentinel, await assertionAuth(key, { aud: ACCOUNT_ISSUER }))).status).toBe(200);
    expect((await v2(sentinel, await assertionAuth(key, { aud: `http://localhost${TOKEN_PATH}` }))).status).toBe(200);
  });

  it('matches the query exactly: another consumer, an extra parameter or a prefix are other audiences', async () => {
    const { key, sentinel } = await setup();
    const other = 'ffffffff-8c1d-4e5f-9a7b-1c2d3e4f5a6b';
    for (const aud of [`http://localhost${V2_PATH}?state=${other}`, `${V2_URL}&x=1`, `${V2_URL.slice(0, -4)}`, `${V2_URL}/`]) {
      const response = await v2(sentinel, await assertionAuth(key, { aud }));
      expect(response.status, aud).toBe(401);
      expect(response.body).toMatchObject({ error: 'invalid_client', error_description: 'the client assertion is for another audience' });
    }
  });

  it('accepts the standard token endpoint URL with its query (?v=1.0)', async () => {
    const { key, sentinel } = await setup();
    const response = await post(sentinel, TOKEN_PATH, 'v=1.0', await assertionAuth(key, { aud: `http://localhost${TOKEN_PATH}?v=1.0` }));
    expect(response.status).toBe(200);
  });
});

describe('client assertion lifetime', () => {
  it('accepts an assertion living one hour by default (Authlib signs 3600 s)', async () => {
    const { key, sentinel } = await setup();
    const now = Math.floor(Date.now() / 1000);
    expect((await v2(sentinel, await assertionAuth(key, { iat: now, exp: now + 3600 }))).status).toBe(200);
  });

  it('refuses one living longer than the default hour', async () => {
    const { key, sentinel } = await setup();
    const now = Math.floor(Date.now() / 1000);
    const response = await v2(sentinel, await assertionAuth(key, { iat: now, exp: now + 3600 + 120 }));
    expect(response.status).toBe(401);
    expect(response.body.error_description).toBe('the client assertion must expire within 3600 seconds');
  });

  it('takes the cap from clientAssertion.maxLifetimeSeconds', async () => {
    const { key, sentinel } = await setup({ clientAssertion: { maxLifetimeSeconds: 600 } });
    const now = Math.floor(Date.now() / 1000);
    const refused = await v2(sentinel, await assertionAuth(key, { iat: now, exp: now + 3600 }));
    expect(refused.status).toBe(401);
    expect(refused.body.error_description).toBe('the client assertion must expire within 600 seconds');
    expect((await v2(sentinel, await assertionAuth(key, { iat: now, exp: now + 590 }))).status).toBe(200);
  });

  it('remembers the jti until the assertion expires, and refuses its replay', async () => {
    // The Store keeps the marker for the TTL it is given (its own clock, not Date.now): check that TTL.
    const store = new MemoryStore();
    const increment = vi.spyOn(store, 'increment');
    const { key, sentinel } = await setup({ store });
    const now = Math.floor(Date.now() / 1000);
    const form = await assertionAuth(key, { iat: now, exp: now + 3600 });
    expect((await v2(sentinel, form)).status).toBe(200);
    const marker = increment.mock.calls.find(([name]) => name.startsWith('assertion-jti:'));
    expect(marker?.[1]).toBeGreaterThanOrEqual(3599 * 1000);
    const replay = await v2(sentinel, form);
    expect(replay.status).toBe(401);
    expect(replay.body.error_description).toMatch(/already been used/);
  });

  it('refuses the replay of an hour-long assertion with the service clock 50 minutes on', async () => {
    const { key, sentinel } = await setup();
    const now = Math.floor(Date.now() / 1000);
    const form = await assertionAuth(key, { iat: now, exp: now + 3600 });
    expect((await v2(sentinel, form)).status).toBe(200);
    advanceClock(3000);
    const replay = await v2(sentinel, form);
    expect(replay.status).toBe(401);
    expect(replay.body.error_description).toMatch(/already been used/);
  });
});
