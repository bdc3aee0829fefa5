/**
 * The end of a sign-in takes its interaction (single use: of concurrent completions one gets it) and only then writes
 * the session and the code. When one of those writes fails (the store down or out of memory) or a hook vetoes it, the
 * answer is a 500 whose cause reaches onError, and the interaction is put back: the browser's retry of the same form
 * (or the host's of `completeLogin()`) signs the user in, instead of a "link expired" page that sends the user back to
 * the application to start again.
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelEvent, type Store } from '../src/index.js';
import {
  AUTHORIZE_PATH,
  csrfOf,
  exchangeCode,
  jsonOf,
  LOGIN_PATH,
  openLogin,
  call,
  postLogin,
  setCookies,
  signIn,
  startInteraction,
  authorizeQuery,
} from './helpers/direct-flow.js';
import { failingSwaps, writesIndex } from './helpers/failing-swaps.js';
import { ACCOUNT, makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { pkcePair } from './helpers/pkce.js';

/** A service whose `onEvent` refuses `authorize.denied` until `allow()`: the answer that denies fails once. */
function denialVetoed() {
  const errors: unknown[] = [];
  let veto = true;
  const sentinel = makeSentinel({
    onError: (error) => errors.push(error),
    onEvent: (event: SentinelEvent) => {
      if (event.type === 'authorize.denied' && veto) throw new Error('audit sink down');
    },
  });
  return { sentinel, errors, allow: () => (veto = false) };
}

/**
 * Posts `form` while the veto holds (a 500 with no redirect, the cause to `onError` once), then again once it is
 * lifted: the retry's redirect back to the app, whose query it answers.
 */
async function vetoedThenRetried(
  sentinel: Sentinel,
  errors: unknown[],
  allow: () => void,
  interaction: string,
  form: Record<string, string>,
): Promise<URLSearchParams> {
  const failed = await postLogin(sentinel, interaction, form);
  expect(failed.status).toBe(500);
  expect(failed.headers.location).toBeUndefined();
  expect(errors.map((error) => (error as Error).message)).toEqual(['audit sink down']);
  allow();
  const retried = await postLogin(sentinel, interaction, form);
  expect(retried.status, retried.body).toBe(303);
  return new URL(String(retried.headers.location)).searchParams;
}

describe('a sign-in whose session or code cannot be written', () => {
  it('answers 500, reports the cause, and the same form posted again signs the user in', async () => {
    const failing = failingSwaps(new MemoryStore());
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ store: failing.store, onError: (error) => errors.push(error) });
    const { verifier, challenge } = pkcePair();
    const { interaction } = await startInteraction(sentinel, authorizeQuery({ code_challenge: challenge, code_challenge_method: 'S256' }));
    const page = await call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }) });
    const form = { csrf_token: csrfOf(page.body), username: USERNAME, password: PASSWORD };

    failing.fail(writesIndex); // the new session joining its user's index
    const failed = await postLogin(sentinel, interaction, form);
    expect(failed.status).toBe(500);
    expect(failed.headers.location).toBeUndefined();
    expect(errors).toEqual([failing.failed[0]]);

    const retried = await postLogin(sentinel, interaction, form);
    expect(retried.status, retried.body).toBe(303);
    const code = new URL(String(retried.headers.location)).searchParams.get('code');
    expect(code).toBeTruthy();
    const tokens = await exchangeCode(sentinel, code as string, verifier);
    expect(tokens.status, tokens.body).toBe(200);
    expect(jsonOf(tokens).access_token).toBeTruthy();
    expect(errors).toHaveLength(1);
  });

  it('puts the interaction back for completeLogin() too, when a hook vetoes the sign-in', async () => {
    const errors: unknown[] = [];
    let veto = true;
    const sentinel = makeSentinel({
      onError: (error) => errors.push(error),
      onEvent: (event: SentinelEvent) => {
        if (event.type === 'session.created' && veto) throw new Error('audit sink down');
      },
    });
    const { interaction } = await startInteraction(sentinel);
    const failed = await sentinel.completeLogin(interaction, { userId: USER_ID, amr: ['pwd'] });
    expect(failed.status).toBe(500);
    expect(errors.map((error) => (error as Error).message)).toEqual(['audit sink down']);

    veto = false;
    const retried = await sentinel.completeLogin(interaction, { userId: USER_ID, amr: ['pwd'] });
    expect(retried.status, retried.body).toBe(303);
    expect(new URL(String(retried.headers.location)).searchParams.get('code')).toBeTruthy();
  });

  it('puts the interaction back when the answer to Cancel fails: Cancel again goes back to the app', async () => {
    const { sentinel, errors, allow } = denialVetoed();
    const { interaction } = await startInteraction(sentinel);
    const form = { csrf_token: await openLogin(sentinel, interaction), cancel: '1' };
    const back = await vetoedThenRetried(sentinel, errors, allow, interaction, form);
    expect(back.get('error')).toBe('access_denied');
    expect(back.get('state')).toBe('st-1');
    // Spent by the Cancel that answered: a third one finds nothing.
    expect((await postLogin(sentinel, interaction, form)).status).toBe(400);
  });

  it('puts the interaction back when the answer to an unreachable level fails: the retry gets it', async () => {
    const { sentinel, errors, allow } = denialVetoed();
    // No TOTP secret and no passkeys: a right password cannot reach mfa.
    const { interaction } = await startInteraction(sentinel, authorizeQuery({ acr_values: 'urn:sentinel:acr:mfa' }));
    const form = { csrf_token: await openLogin(sentinel, interaction), username: USERNAME, password: PASSWORD };
    const back = await vetoedThenRetried(sentinel, errors, allow, interaction, form);
    expect(back.get('error')).toBe('unmet_authentication_requirements');
    expect(back.get('state')).toBe('st-1');
    expect(back.get('code')).toBeNull();
  });

  it('keeps a refused completion spent: the interaction of another account does not come back', async () => {
    const sentinel = makeSentinel();
    const { interaction } = await startInteraction(sentinel);
    const refused = await sentinel.completeLogin(interaction, { userId: USER_ID, accountId: 'another-account' });
    expect(refused.status).toBe(400);
    const again = await sentinel.completeLogin(interaction, { userId: USER_ID });
    expect(again.status).toBe(400);
  });

  it('leaves the session the browser held signed in when a hook vetoes the sign-in that replaces it', async () => {
    const errors: unknown[] = [];
    let veto = false;
    const sentinel = makeSentinel({
      store: new MemoryStore(),
      onError: (error) => errors.push(error),
      onEvent: (event: SentinelEvent) => {
        if (event.type === 'session.created' && veto) throw new Error('audit sink down');
      },
    });
    const cookie = `sentinel_session=${(await signIn(sentinel)).sessionCookie}`;
    const silent = async () => {
      const response = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ prompt: 'none' }), headers: { cookie } });
      return new URL(String(response.headers.location)).searchParams;
    };
    expect((await silent()).get('code')).toBeTruthy();
    // The same user signs in again (prompt=login) in that browser, and the audit sink refuses the new session.
    const { interaction } = await startInteraction(sentinel, authorizeQuery({ prompt: 'login' }));
    const page = await call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }), headers: { cookie } });
    const form = { csrf_token: csrfOf(page.body), username: USERNAME, password: PASSWORD };
    const listed = await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID });
    veto = true;
    const failed = await postLogin(sentinel, interaction, form, undefined, cookie);
    expect(failed.status).toBe(500);
    expect(errors.map((error) => (error as Error).message)).toEqual(['audit sink down']);
    // Nothing changed for the browser: its session still signs it in, the only one of the user's.
    expect((await silent()).get('code'), 'the earlier session survives the failed sign-in').toBeTruthy();
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual(listed);
    // The retry replaces it, as a sign-in does.
    veto = false;
    const retried = await postLogin(sentinel, interaction, form, undefined, cookie);
    expect(retried.status, retried.body).toBe(303);
    expect((await silent()).get('error')).toBe('login_required');
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toHaveLength(1);
  });

  it('keeps what the earlier session carried when the failed sign-in would have carried it on', async () => {
    let veto = false;
    const sentinel = makeSentinel({
      store: new MemoryStore(),
      onError: () => undefined,
      onEvent: (event: SentinelEvent) => {
        if (event.type === 'session.created' && veto) throw new Error('audit sink down');
      },
    });
    const first = await signIn(sentinel);
    expect((await exchangeCode(sentinel, first.code, first.verifier)).status).toBe(200);
    let cookie = `sentinel_session=${first.sessionCookie}`;
    /** The same user signs in again in this browser (prompt=login), the code exchanged when it is delivered. */
    const again = async () => {
      const { verifier, challenge } = pkcePair();
      const query = authorizeQuery({ prompt: 'login', code_challenge: challenge, code_challenge_method: 'S256' });
      const { interaction } = await startInteraction(sentinel, query);
      const page = await call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }), headers: { cookie } });
      const response = await postLogin(
        sentinel,
        interaction,
        { csrf_token: csrfOf(page.body), username: USERNAME, password: PASSWORD },
        undefined,
        cookie,
      );
      if (response.status !== 303) return response;
      const code = new URL(String(response.headers.location)).searchParams.get('code') as string;
      expect((await exchangeCode(sentinel, code, verifier)).status).toBe(200);
      return response;
    };
    const second = await again();
    cookie = setCookies(second)
      .find((line) => line.startsWith('sentinel_session='))
      ?.split(';')[0] as string;
    // One browser: the second sign-in's session, carrying the first.
    const listed = await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID });
    expect(listed).toHaveLength(1);
    veto = true;
    expect((await again()).status).toBe(500);
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual(listed);
    // Signing out of the browser still ends both sign-ins' grants: the browser's session carries the first again.
    veto = false;
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: (listed[0] as { sid: string }).sid })).toBe(true);
    expect(await sentinel.listUserGrants({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
  });
});

/** A MemoryStore whose writes (`set`) of codes reject while `failCodes(true)`. */
function failingCodeStore(): { store: Store; failCodes: (on: boolean) => void } {
  const memory = new MemoryStore();
  let failing = false;
  const set: Store['set'] = (key, value, ttlMs) =>
    failing && key.startsWith('code:') ? Promise.reject(new Error('code write failed')) : memory.set(key, value, ttlMs);
  const store = new Proxy(memory, {
    get: (target, name) => {
      if (name === 'set') return set;
      const value: unknown = Reflect.get(target, name);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store, failCodes: (on) => (failing = on) };
}

describe('the events of a sign-in stand for what it wrote', () => {
  it('announces no session.created when the sign-in fails at its code write', async () => {
    const { store, failCodes } = failingCodeStore();
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel({ store, onError: () => undefined, onEvent: (event) => void events.push(event) });
    const { interaction } = await startInteraction(sentinel);
    failCodes(true);
    expect((await sentinel.completeLogin(interaction, { userId: USER_ID, amr: ['pwd'] })).status).toBe(500);
    // The session went with the failure (nothing listed): no event may say it was created.
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
    expect(events.map((event) => event.type)).not.toContain('session.created');
    expect(events.map((event) => event.type)).not.toContain('code.issued');
  });

  it('keeps no code when a hook vetoes its code.issued or the session.created before it', async () => {
    for (const vetoed of ['code.issued', 'session.created'] as const) {
      const memory = new MemoryStore();
      const set = vi.spyOn(memory, 'set');
      const sentinel = makeSentinel({
        store: memory,
        onError: () => undefined,
        onEvent: (event: SentinelEvent) => {
          if (event.type === vetoed) throw new Error(`${vetoed} vetoed`);
        },
      });
      const { interaction } = await startInteraction(sentinel);
      expect((await sentinel.completeLogin(interaction, { userId: USER_ID, amr: ['pwd'] })).status, vetoed).toBe(500);
      const codes = set.mock.calls.map(([key]) => key).filter((key) => key.startsWith('code:'));
      expect(codes, vetoed).toHaveLength(1);
      expect(await memory.get(codes[0] as string), vetoed).toBeNull();
    }
  });
});

describe('the code.issued of a silent sign-in', () => {
  it('is not emitted, and the code not kept, when the session ends while the request uses it', async () => {
    const memory = new MemoryStore();
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel({ store: memory, onEvent: (event) => void events.push(event) });
    const cookie = `sentinel_session=${(await signIn(sentinel)).sessionCookie}`;
    const set = vi.spyOn(memory, 'set');
    // A logout lands between this request's read of the session and its idle extension: the extension is refused.
    const swap = memory.swap.bind(memory);
    vi.spyOn(memory, 'swap').mockImplementation((entries) =>
      entries.some((entry) => entry.key.startsWith('session:')) ? Promise.resolve(false) : swap(entries),
    );
    events.length = 0;
    const response = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ prompt: 'none' }), headers: { cookie } });
    expect(new URL(String(response.headers.location)).searchParams.get('error')).toBe('login_required');
    expect(events.map((event) => event.type)).not.toContain('code.issued');
    const codes = set.mock.calls.map(([key]) => key).filter((key) => key.startsWith('code:'));
    expect(codes).toHaveLength(1);
    expect(await memory.get(codes[0] as string)).toBeNull();
  });
});
