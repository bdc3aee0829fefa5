/**
 * The end of an interaction (the login form, `completeLogin()`, a cancel, an unreachable acr) delivers to the
 * redirect URI validated at /authorize only while the app still has it and is still enabled: an app disabled or
 * deleted, or a URI removed, during the sign-in gets nothing, and the browser an error page.
 */
import { describe, expect, it } from 'vitest';
import { contextOf } from '../src/http/context.js';
import type { Sentinel, SentinelEvent } from '../src/index.js';
import { authorizeQuery, call, openLogin, postLogin, setCookies, startInteraction } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, PASSWORD, PUBLIC_CLIENT_ID, REDIRECT_URI, SECOND_REDIRECT_URI, USERNAME } from './helpers/fixtures.js';
import { pkcePair } from './helpers/pkce.js';

type Change = (sentinel: Sentinel) => Promise<unknown>;

const apps = (sentinel: Sentinel) => contextOf(sentinel).apps;

const CHANGES: Record<string, Change> = {
  'the redirect URI removed': async (sentinel) => {
    const app = await apps(sentinel).findApp(ACCOUNT, PUBLIC_CLIENT_ID);
    expect(await apps(sentinel).updateApp?.({ ...(app as NonNullable<typeof app>), redirectUris: [SECOND_REDIRECT_URI] })).toBe(true);
  },
  'the app disabled': async (sentinel) => expect(await apps(sentinel).disableApp?.(ACCOUNT, PUBLIC_CLIENT_ID)).toBe(true),
  'the app deleted': async (sentinel) => expect(await apps(sentinel).deleteApp?.(ACCOUNT, PUBLIC_CLIENT_ID)).toBe(true),
};

function setUp(options: Parameters<typeof makeSentinel>[0] = {}) {
  const events: SentinelEvent[] = [];
  const sentinel = makeSentinel({ onEvent: (event) => void events.push(event), ...options });
  const { challenge } = pkcePair();
  const query = authorizeQuery({
    client_id: PUBLIC_CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  return { sentinel, events, query };
}

function expectNothingDelivered(response: { status: number; headers: Record<string, unknown> }, events: SentinelEvent[]): void {
  expect(response.status).toBe(400);
  expect(response.headers.location).toBeUndefined();
  expect(String(response.headers['content-type'])).toMatch(/text\/html/);
  const types = events.map((event) => event.type);
  expect(types).not.toContain('code.issued');
  expect(types).not.toContain('session.created');
}

describe('an interaction whose app changed during the sign-in', () => {
  for (const [name, change] of Object.entries(CHANGES)) {
    it(`the login form: ${name}, no code and no session`, async () => {
      const { sentinel, events, query } = setUp();
      const { interaction } = await startInteraction(sentinel, query);
      const csrf = await openLogin(sentinel, interaction);
      await change(sentinel);
      const response = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
      expectNothingDelivered(response, events);
      expect(setCookies(response).some((line) => line.startsWith('sentinel_session='))).toBe(false);
    });

    it(`a cancel: ${name}, no access_denied redirect`, async () => {
      const { sentinel, events, query } = setUp();
      const { interaction } = await startInteraction(sentinel, query);
      const csrf = await openLogin(sentinel, interaction);
      await change(sentinel);
      const response = await postLogin(sentinel, interaction, { csrf_token: csrf, cancel: '1' });
      expectNothingDelivered(response, events);
    });

    it(`completeLogin(): ${name}, no code`, async () => {
      const { sentinel, events, query } = setUp({ login: { url: 'https://host.example/sign-in' } });
      const started = await call(sentinel, { path: `/sentinel/api/account/${ACCOUNT}/authorize`, query });
      const interaction = new URL(String(started.headers.location)).searchParams.get('interaction') as string;
      await change(sentinel);
      const response = await sentinel.completeLogin(interaction, { userId: 'u-alice' });
      expectNothingDelivered(response, events);
    });
  }

  it('still delivers when the app kept the URI (another URI removed)', async () => {
    const { sentinel, query } = setUp();
    const { interaction } = await startInteraction(sentinel, query);
    const csrf = await openLogin(sentinel, interaction);
    const app = await apps(sentinel).findApp(ACCOUNT, PUBLIC_CLIENT_ID);
    await apps(sentinel).updateApp?.({ ...(app as NonNullable<typeof app>), redirectUris: [REDIRECT_URI] });
    const response = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
    expect(response.status).toBe(303);
    expect(String(response.headers.location)).toMatch(/^https:\/\/app\.example\.com\/cb\?code=/);
  });

  it('a failing app store at delivery is a 500 with nothing issued', async () => {
    const errors: unknown[] = [];
    const { sentinel, events, query } = setUp({ onError: (error) => void errors.push(error) });
    const { interaction } = await startInteraction(sentinel, query);
    const csrf = await openLogin(sentinel, interaction);
    const store = apps(sentinel);
    const failure = new Error('registry down');
    store.findApp = () => Promise.reject(failure);
    const response = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
    expect(response.status).toBe(500);
    expect(response.headers.location).toBeUndefined();
    expect(events.map((event) => event.type)).not.toContain('code.issued');
    expect(errors).toContain(failure);
  });
});
