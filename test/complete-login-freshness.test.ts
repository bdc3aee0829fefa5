/**
 * `prompt=login` and `max_age` (OpenID Connect Core §3.1.2.1) hold for a host's own login page too: the final check
 * of every sign-in refuses one older than the request allows with `login_required`, issuing nothing, so no code
 * carries an old `auth_time`. The host can read what the interaction asks with `sentinel.interaction(id)`.
 */
import { describe, expect, it } from 'vitest';
import type { SentinelEvent, SentinelResponse } from '../src/index.js';
import type { AuthorizationRequest } from '../src/authorize/request/validate-request.js';
import { reauthenticationReason, staleSignInReason } from '../src/authorize/request/prompt.js';
import {
  AUTHORIZE_PATH,
  authorizeQuery,
  call,
  exchangeCode,
  jsonOf,
  openLogin,
  postLogin,
  setCookies,
  startInteraction,
} from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { pkcePair } from './helpers/pkce.js';

const HOST_LOGIN = { login: { url: 'https://host.example.com/sign-in' } };
const now = (): number => Math.floor(Date.now() / 1000);

function hostSentinel() {
  const events: SentinelEvent[] = [];
  const sentinel = makeSentinel({ ...HOST_LOGIN, onEvent: (event) => void events.push(event) });
  return { sentinel, events };
}

function redirectParams(response: SentinelResponse): URLSearchParams {
  expect(response.status).toBe(303);
  return new URL(String(response.headers.location)).searchParams;
}

function idTokenClaims(body: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(Buffer.from(String(body.id_token).split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;
}

describe('completeLogin() and the freshness a request asks for', () => {
  it.each([
    ['max_age=60', { max_age: '60' }],
    ['max_age=0', { max_age: '0' }],
    ['prompt=login', { prompt: 'login' }],
  ])('%s: a sign-in of an hour ago gets login_required, no session and no code', async (_name, extra) => {
    const { sentinel, events } = hostSentinel();
    const { interaction } = await startInteraction(sentinel, authorizeQuery(extra));
    const answer = await sentinel.completeLogin(interaction, { userId: USER_ID, authTime: now() - 3600, amr: ['pwd'] });

    const params = redirectParams(answer);
    expect(params.get('error')).toBe('login_required');
    expect(params.get('code')).toBeNull();
    expect(params.get('state')).toBe('st-1');
    expect(params.get('iss')).toBe(`http://localhost/sentinel/api/account/${ACCOUNT}`);
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(events.map((event) => event.type)).not.toContain('session.created');
    expect(events.find((event) => event.type === 'authorize.denied')).toMatchObject({ clientId: CLIENT_ID, error: 'login_required' });
    // The interaction is spent: the browser starts again at the app.
    expect((await sentinel.completeLogin(interaction, { userId: USER_ID })).status).toBe(400);
  });

  it('prompt=login: a sign-in a second before the request is refused, one made during it is accepted', async () => {
    const { sentinel } = hostSentinel();
    const startedAt = now();
    const before = await startInteraction(sentinel, authorizeQuery({ prompt: 'login' }));
    const refused = await sentinel.completeLogin(before.interaction, { userId: USER_ID, authTime: startedAt - 1 });
    expect(redirectParams(refused).get('error')).toBe('login_required');

    const during = await startInteraction(sentinel, authorizeQuery({ prompt: 'login' }));
    const accepted = await sentinel.completeLogin(during.interaction, { userId: USER_ID, authTime: now() });
    expect(redirectParams(accepted).get('code')).toBeTruthy();
  });

  it('max_age: an earlier sign-in younger than max_age, or a new one with max_age=0, gets a code with its auth_time', async () => {
    const { sentinel } = hostSentinel();
    for (const [maxAge, authTime] of [
      ['600', now() - 30],
      ['0', undefined],
    ] as const) {
      const { verifier, challenge } = pkcePair();
      const query = authorizeQuery({ scope: 'openid', max_age: maxAge, code_challenge: challenge, code_challenge_method: 'S256' });
      const { interaction } = await startInteraction(sentinel, query);
      const answer = await sentinel.completeLogin(interaction, { userId: USER_ID, authTime });
      const code = redirectParams(answer).get('code');
      expect(code, `max_age=${maxAge}`).toBeTruthy();
      const tokens = await exchangeCode(sentinel, code as string, verifier);
      expect(tokens.status).toBe(200);
      const claims = idTokenClaims(jsonOf(tokens));
      expect(now() - (claims.auth_time as number)).toBeLessThan(Number(maxAge) === 0 ? 5 : 600);
    }
  });

  it('the built-in login page still answers prompt=login and max_age=0 with a code (its sign-in is new)', async () => {
    const sentinel = makeSentinel();
    for (const extra of [{ prompt: 'login' }, { max_age: '0' }] as Record<string, string>[]) {
      const { interaction } = await startInteraction(sentinel, authorizeQuery(extra));
      const csrf = await openLogin(sentinel, interaction);
      const answer = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
      expect(redirectParams(answer).get('code'), JSON.stringify(extra)).toBeTruthy();
      expect(setCookies(answer).some((line) => line.startsWith('sentinel_session='))).toBe(true);
    }
  });
});

describe('sentinel.interaction()', () => {
  it('shows what the request asks of the sign-in, without using the interaction up', async () => {
    const { sentinel } = hostSentinel();
    const startedAt = now();
    const query = authorizeQuery({
      scope: 'openid',
      prompt: 'login',
      max_age: '300',
      login_hint: 'alice@example.com',
      ui_locales: 'de en',
    });
    const { interaction } = await startInteraction(sentinel, query);

    const view = await sentinel.interaction(interaction);
    expect(view).toEqual({
      accountId: ACCOUNT,
      clientId: CLIENT_ID,
      createdAt: expect.any(Number),
      prompt: ['login'],
      maxAge: 300,
      loginHint: 'alice@example.com',
      uiLocales: ['de', 'en'],
    });
    expect(view?.createdAt).toBeGreaterThanOrEqual(startedAt);
    expect(view?.createdAt).toBeLessThanOrEqual(now());

    const answer = await sentinel.completeLogin(interaction, { userId: USER_ID });
    expect(redirectParams(answer).get('code')).toBeTruthy();
    expect(await sentinel.interaction(interaction)).toBeNull();
    expect(await sentinel.interaction('not-an-interaction')).toBeNull();
  });
});

describe('sentinel.interaction() and the user a request names', () => {
  it('shows the sub of the claims parameter, and a completeLogin() for another user gets login_required', async () => {
    const { sentinel } = hostSentinel();
    const claims = JSON.stringify({ id_token: { sub: { value: 'u-bob' } } });
    const { interaction } = await startInteraction(sentinel, authorizeQuery({ scope: 'openid', claims }));
    expect((await sentinel.interaction(interaction))?.subject).toBe('u-bob');
    const answer = await sentinel.completeLogin(interaction, { userId: USER_ID });
    expect(redirectParams(answer).get('error')).toBe('login_required');
    expect(redirectParams(answer).get('code')).toBeNull();
    // A request that names nobody shows no subject.
    const other = await startInteraction(sentinel, authorizeQuery({ scope: 'openid' }));
    expect(await sentinel.interaction(other.interaction)).not.toHaveProperty('subject');
  });
});

describe('staleSignInReason', () => {
  const createdAtMs = 1_000_000_500;
  it('takes any sign-in made during the interaction, in whole seconds', () => {
    expect(staleSignInReason({ prompt: ['login'], maxAge: 0 }, 1_000_000, createdAtMs, 1_000_100)).toBeNull();
  });
  it('applies max_age to an earlier sign-in as to a session: at max_age seconds it is too old', () => {
    expect(staleSignInReason({ maxAge: 60 }, 999_999, createdAtMs, 1_000_058)).toBeNull();
    expect(staleSignInReason({ maxAge: 60 }, 999_999, createdAtMs, 1_000_059)).toMatch(/max_age/);
    expect(staleSignInReason({ maxAge: 0 }, 999_999, createdAtMs, 999_999)).toMatch(/max_age/);
  });
  it('refuses an earlier sign-in under prompt=login, and leaves select_account to the host', () => {
    expect(staleSignInReason({ prompt: ['login'] }, 999_999, createdAtMs, 1_000_000)).toMatch(/prompt=login/);
    expect(staleSignInReason({ prompt: ['select_account'] }, 999_999, createdAtMs, 1_000_000)).toBeNull();
    expect(staleSignInReason({}, 0, createdAtMs, 1_000_000)).toBeNull();
  });
});

describe("a session whose auth_time is ahead of this instance's clock", () => {
  const request = (maxAge: number): AuthorizationRequest =>
    ({
      accountId: ACCOUNT,
      clientId: CLIENT_ID,
      redirectUri: 'https://app.example.com/cb',
      iss: 'x',
      redirectUriInRequest: false,
      maxAge,
    }) as AuthorizationRequest;

  it('is no younger than now: max_age=0 still asks for a sign-in, a larger max_age does not', () => {
    const session = { userId: USER_ID, authTime: 1_000_030, amr: undefined };
    expect(reauthenticationReason(request(0), session, 1_000_000)).toMatch(/max_age/);
    expect(reauthenticationReason(request(60), session, 1_000_000)).toBeNull();
  });

  it('prompt=none with max_age=0 gets login_required after completeLogin() with an authTime within the skew', async () => {
    const { sentinel } = hostSentinel();
    const { interaction } = await startInteraction(sentinel);
    // Another host's clock, a few seconds ahead: completeLogin() takes up to 60 s of that.
    const signedIn = await sentinel.completeLogin(interaction, { userId: USER_ID, authTime: now() + 50 });
    const cookie = setCookies(signedIn)
      .find((line) => line.startsWith('sentinel_session='))
      ?.split(';')[0];
    expect(cookie).toBeDefined();
    const silent = await call(sentinel, {
      path: AUTHORIZE_PATH,
      query: authorizeQuery({ prompt: 'none', max_age: '0' }),
      headers: { cookie: cookie as string },
    });
    const params = new URL(String(silent.headers.location)).searchParams;
    expect(params.get('error')).toBe('login_required');
    expect(params.get('code')).toBeNull();
  });
});
