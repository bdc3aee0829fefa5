/**
 * The grant model: liveness (a user token is accepted only while its grant exists), one atomic step for code
 * redemption and refresh rotation, generation-based reuse detection, and one store key per live grant.
 */
import { describe, expect, it } from 'vitest';
import { issueAccessToken } from '../src/token/access-token.js';
import { codeKey } from '../src/token/code-records.js';
import { MAX_REVOKED_ACCESS_TOKENS } from '../src/token/grant-records.js';
import { MemoryStore, type SentinelEvent, type SentinelOptions, type Store } from '../src/index.js';
import { jsonOf, postForm, TOKEN_PATH, useRefreshToken } from './helpers/direct-flow.js';
import {
  ACCOUNT,
  CLIENT_ID,
  CLIENT_SECRET,
  makeSentinel,
  OTHER_ACCOUNT,
  OTHER_CLIENT_ID,
  OTHER_SECRET,
  PUBLIC_CLIENT_ID,
  REDIRECT_URI,
  USER_ID,
} from './helpers/fixtures.js';
import { codeFor } from './helpers/oauth.js';
import { contextOf } from '../src/http/context.js';

/** A store whose contents can be wiped (an empty restart) and whose operations can be made to fail. */
function controllableStore(): Store & { log: string[]; failing: Set<string>; wipe(): void; size(): number } {
  let inner = new MemoryStore();
  const store = {
    log: [] as string[],
    failing: new Set<string>(),
    wipe: () => {
      inner = new MemoryStore();
    },
    size: () => inner.size,
    guard<T>(op: string, key: string, run: () => Promise<T>): Promise<T> {
      store.log.push(`${op} ${key.split(':')[0]}`);
      return store.failing.has(op) ? Promise.reject(new Error('store down')) : run();
    },
    get: (key: string) => store.guard('get', key, () => inner.get(key)),
    set: (key: string, value: string, ttl: number) => store.guard('set', key, () => inner.set(key, value, ttl)),
    take: (key: string) => store.guard('take', key, () => inner.take(key)),
    delete: (key: string) => store.guard('delete', key, () => inner.delete(key)),
    increment: (key: string, ttl: number) => store.guard('increment', key, () => inner.increment(key, ttl)),
    swap: (entries: Parameters<Store['swap']>[0]) => store.guard('swap', entries[0]?.key ?? '', () => inner.swap(entries)),
  };
  return store;
}

function setup(overrides: Partial<SentinelOptions> = {}) {
  const store = controllableStore();
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  const sentinel = makeSentinel({ store, onEvent: (event) => events.push(event), onError: (error) => errors.push(error), ...overrides });
  const exchange = (
    code: string,
    client: { id: string; secret?: string } = { id: CLIENT_ID, secret: CLIENT_SECRET },
    redirectUri = REDIRECT_URI,
  ) =>
    postForm(
      sentinel,
      TOKEN_PATH,
      new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        client_id: client.id,
        ...(client.secret === undefined ? {} : { client_secret: client.secret }),
      }).toString(),
    );
  const refresh = (token: string) => useRefreshToken(sentinel, token);
  const accepted = (token: string) =>
    sentinel.verifyAccessToken(token).then(
      () => true,
      () => false,
    );
  const signIn = async () => {
    const response = await exchange(await codeFor(sentinel));
    expect(response.status).toBe(200);
    return jsonOf(response) as { access_token: string; refresh_token: string };
  };
  return { sentinel, store, events, errors, exchange, refresh, accepted, signIn };
}

/** An `onEvent` that records every event and throws on the next `token.issued` once `failNext()` is called. */
function hiccupingSink() {
  const events: SentinelEvent[] = [];
  let fail = false;
  return {
    events,
    failNext: () => {
      fail = true;
    },
    onEvent: (event: SentinelEvent) => {
      if (fail && event.type === 'token.issued') {
        fail = false;
        throw new Error('audit sink hiccup');
      }
      events.push(event);
    },
  };
}

describe('grant liveness', () => {
  it('refuses every user token after the store lost its data, while consumer tokens stay store-free', async () => {
    const { sentinel, store, refresh, accepted, signIn } = setup();
    const tokens = await signIn();
    expect(await accepted(tokens.access_token)).toBe(true);
    const consumer = await issueAccessToken(contextOf(sentinel), {
      accountId: ACCOUNT,
      clientId: CLIENT_ID,
      subject: 'c',
      grantType: 'client_credentials',
    });
    store.wipe(); // an empty restart
    expect(await accepted(tokens.access_token)).toBe(false);
    const response = await refresh(tokens.refresh_token);
    expect(response.status).toBe(400);
    expect(jsonOf(response).error).toBe('invalid_grant');
    store.log.length = 0;
    store.failing.add('get');
    await expect(sentinel.verifyAccessToken(consumer.token)).resolves.toMatchObject({ sub: 'c' });
    expect(store.log).toEqual([]);
  });

  it('checks a user token with one store read and fails (not accepts) when the store fails', async () => {
    const { sentinel, store, signIn } = setup();
    const tokens = await signIn();
    store.log.length = 0;
    await sentinel.verifyAccessToken(tokens.access_token);
    expect(store.log).toEqual(['get grant']);
    store.failing.add('get');
    await expect(sentinel.verifyAccessToken(tokens.access_token)).rejects.toThrow('store down');
  });

  it('refuses a token whose grant id names no grant, and one revoked by jti', async () => {
    const { sentinel, signIn } = setup();
    const forged = await issueAccessToken(contextOf(sentinel), {
      accountId: ACCOUNT,
      clientId: CLIENT_ID,
      subject: USER_ID,
      grantType: 'authorization_code',
      grantId: 'never-created',
    });
    await expect(sentinel.verifyAccessToken(forged.token)).rejects.toMatchObject({ code: 'invalid_token' });
    const tokens = await signIn();
    const revoke = await postForm(
      sentinel,
      `${TOKEN_PATH}/revoke`,
      new URLSearchParams({ token: tokens.access_token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
    );
    expect(revoke.status).toBe(200);
    await expect(sentinel.verifyAccessToken(tokens.access_token)).rejects.toMatchObject({ code: 'invalid_token' });
  });
});

describe('storage per grant', () => {
  it('keeps one key per live grant however often its refresh token rotates', async () => {
    const { store, refresh, signIn } = setup();
    let tokens = await signIn();
    expect(store.size()).toBe(1);
    for (let i = 0; i < 25; i++) {
      const response = await refresh(tokens.refresh_token);
      expect(response.status).toBe(200);
      tokens = { ...tokens, ...(jsonOf(response) as typeof tokens) };
    }
    expect(store.size()).toBe(1);
  });
});

describe('refresh rotation', () => {
  it('revokes the grant when an older generation comes back after the grace window', async () => {
    const { refresh, accepted, signIn, events } = setup({ retryGrace: 0 });
    const first = await signIn();
    const second = jsonOf(await refresh(first.refresh_token)) as typeof first;
    const reuse = await refresh(first.refresh_token);
    expect(jsonOf(reuse).error).toBe('invalid_grant');
    expect(events.some((event) => event.type === 'refresh.reused')).toBe(true);
    expect(await accepted(second.access_token)).toBe(false);
    expect((await refresh(second.refresh_token)).status).toBe(400);
  });

  it('refuses the just-rotated token within the grace window without revoking anything', async () => {
    const { refresh, accepted, signIn, events } = setup({ retryGrace: 30 });
    const first = await signIn();
    const second = jsonOf(await refresh(first.refresh_token)) as typeof first;
    const retry = await refresh(first.refresh_token);
    expect(retry.status).toBe(400);
    expect(jsonOf(retry).error).toBe('invalid_grant');
    expect(events.some((event) => event.type === 'refresh.reused')).toBe(false);
    expect(await accepted(second.access_token)).toBe(true);
    const third = jsonOf(await refresh(second.refresh_token)) as typeof first;
    expect(third.refresh_token).toBeTypeOf('string');
    // Two generations back is reuse whatever the grace.
    expect(jsonOf(await refresh(first.refresh_token)).error).toBe('invalid_grant');
    expect(events.some((event) => event.type === 'refresh.reused')).toBe(true);
    expect(await accepted(third.access_token)).toBe(false);
  });

  it('does not let a forged older generation (the grant id is public) revoke the grant', async () => {
    const { refresh, accepted, signIn, events } = setup({ retryGrace: 0 });
    const first = await signIn();
    const second = jsonOf(await refresh(first.refresh_token)) as typeof first;
    const [gid, , , secret] = second.refresh_token.split('.') as [string, string, string, string];
    const forged = `${gid}.0.${'A'.repeat(43)}.${secret}`;
    expect(jsonOf(await refresh(forged)).error).toBe('invalid_grant');
    expect(events.some((event) => event.type === 'refresh.reused')).toBe(false);
    expect(await accepted(second.access_token)).toBe(true);
  });

  it('changes nothing when the rotation cannot be written, so the retry succeeds and is not reuse', async () => {
    const { store, refresh, accepted, signIn, events, errors } = setup({ retryGrace: 0 });
    const first = await signIn();
    store.failing.add('swap');
    const failed = await refresh(first.refresh_token);
    expect(failed.status).toBe(500);
    expect(jsonOf(failed).error).toBe('server_error');
    expect(errors).toHaveLength(1);
    store.failing.clear();
    const retry = await refresh(first.refresh_token);
    expect(retry.status).toBe(200);
    expect(events.some((event) => event.type === 'refresh.reused')).toBe(false);
    expect(await accepted((jsonOf(retry) as typeof first).access_token)).toBe(true);
  });

  it('an onEvent that throws on token.issued of a refresh: the rotated token is still delivered, onError told, no reuse', async () => {
    const sink = hiccupingSink();
    const { refresh, accepted, signIn, errors } = setup({ retryGrace: 0, onEvent: sink.onEvent });
    const first = await signIn();
    sink.failNext();
    // The old token is spent by now: a 500 here would leave the client with nothing but a token whose next
    // presentation (no grace at all) is taken for reuse and revokes the grant.
    const rotated = await refresh(first.refresh_token);
    expect(rotated.status).toBe(200);
    const tokens = jsonOf(rotated) as typeof first;
    expect(errors).toEqual([new Error('audit sink hiccup')]);
    expect(await accepted(tokens.access_token)).toBe(true);
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
    expect(sink.events.some((event) => event.type === 'refresh.reused')).toBe(false);
  });

  it('issues on refresh only the scope the app may still have, once an operator narrowed it', async () => {
    const { sentinel, exchange, refresh } = setup();
    const tokens = jsonOf(await exchange(await codeFor(sentinel, { scope: 'openid read write' }))) as { refresh_token: string };
    const apps = contextOf(sentinel).apps;
    const app = await apps.findApp(ACCOUNT, CLIENT_ID);
    await apps.updateApp?.({ ...(app as NonNullable<typeof app>), scope: 'read' });
    const refreshed = jsonOf(await refresh(tokens.refresh_token));
    expect(refreshed.scope).toBe('openid read');
  });

  it('issues at the code exchange only the scope the app may still have, once an operator narrowed it meanwhile', async () => {
    const { sentinel, exchange, accepted } = setup();
    const code = await codeFor(sentinel, { scope: 'openid read write' });
    // Narrowed while the code is pending (up to codeTtl): the first tokens must not carry what the app lost.
    const apps = contextOf(sentinel).apps;
    const app = await apps.findApp(ACCOUNT, CLIENT_ID);
    await apps.updateApp?.({ ...(app as NonNullable<typeof app>), scope: 'read' });
    const tokens = jsonOf(await exchange(code)) as { scope: string; access_token: string; refresh_token: string };
    expect(tokens.scope).toBe('openid read');
    expect(JSON.parse(Buffer.from(tokens.access_token.split('.')[1] as string, 'base64url').toString()).scope).toBe('openid read');
    expect(await accepted(tokens.access_token)).toBe(true);
    // The grant itself holds the narrowed scope: a refresh asking for the lost one is refused, not re-granted.
    const askWrite = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      scope: 'write',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
    expect(jsonOf(await postForm(sentinel, TOKEN_PATH, askWrite.toString())).error).toBe('invalid_scope');
  });

  it('remembers at most 64 revoked access tokens of a grant; one more ends the grant', async () => {
    const { sentinel, refresh, accepted, signIn, events } = setup();
    let tokens = await signIn();
    const accessTokens = [tokens.access_token];
    for (let i = 0; i < MAX_REVOKED_ACCESS_TOKENS; i++) {
      tokens = jsonOf(await refresh(tokens.refresh_token)) as typeof tokens;
      accessTokens.push(tokens.access_token);
    }
    const revoke = (token: string) =>
      postForm(
        sentinel,
        `${TOKEN_PATH}/revoke`,
        new URLSearchParams({ token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
      );
    for (const token of accessTokens.slice(0, MAX_REVOKED_ACCESS_TOKENS)) expect((await revoke(token)).status).toBe(200);
    expect(await accepted(tokens.access_token)).toBe(true);
    expect(events.some((event) => event.type === 'grant.ended')).toBe(false);
    expect((await revoke(tokens.access_token)).status).toBe(200);
    expect(events).toContainEqual(expect.objectContaining({ type: 'grant.ended', reason: 'revocations-limit' }));
    expect(jsonOf(await refresh(tokens.refresh_token)).error).toBe('invalid_grant');
  });

  it('revokes the access tokens of one grant one at a time; one the store fails does not fail the next', async () => {
    const { sentinel, store, refresh, accepted, signIn, errors } = setup();
    const first = await signIn();
    const second = jsonOf(await refresh(first.refresh_token)) as typeof first;
    const revoke = (token: string) =>
      postForm(
        sentinel,
        `${TOKEN_PATH}/revoke`,
        new URLSearchParams({ token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
      );
    // The first revocation's write hangs until it is failed by hand.
    const swap = store.swap;
    store.log.length = 0;
    const swaps: Array<(error: Error) => void> = [];
    store.swap = () => new Promise((_, reject) => void swaps.push(reject));
    const failing = revoke(first.access_token);
    await expect.poll(() => swaps.length).toBe(1);
    store.swap = swap;
    const following = revoke(second.access_token);
    // The second waits for the first instead of racing it for the grant record.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(store.log.filter((entry) => entry.startsWith('swap'))).toEqual([]);
    swaps[0]?.(new Error('store down'));
    expect((await failing).status).toBe(500);
    expect((await following).status).toBe(200);
    expect(errors).toHaveLength(1);
    expect(await accepted(first.access_token)).toBe(true);
    expect(await accepted(second.access_token)).toBe(false);
    expect((await revoke(first.access_token)).status).toBe(200);
    expect(await accepted(first.access_token)).toBe(false);
  });

  it('gives exactly one of 20 concurrent rotations of one token new tokens', async () => {
    const { refresh, signIn } = setup();
    const first = await signIn();
    const responses = await Promise.all(Array.from({ length: 20 }, () => refresh(first.refresh_token)));
    expect(responses.filter((response) => response.status === 200)).toHaveLength(1);
  });
});

describe('code redemption', () => {
  it('does not spend a code presented by another client or with another redirect_uri', async () => {
    const { sentinel, exchange, events } = setup();
    const code = await codeFor(sentinel);
    const wrongClient = await exchange(code, { id: PUBLIC_CLIENT_ID });
    expect(jsonOf(wrongClient).error).toBe('invalid_grant');
    const wrongRedirect = await exchange(code, undefined, 'https://app.example.com/elsewhere');
    expect(jsonOf(wrongRedirect).error).toBe('invalid_grant');
    expect(await contextOf(sentinel).store.get(codeKey(code))).not.toBeNull();
    expect((await exchange(code)).status).toBe(200);
    expect(events.some((event) => event.type === 'code.replayed')).toBe(false);
  });

  it('a spent code presented by another client, of this account or another, revokes nothing', async () => {
    const { sentinel, exchange, events, accepted } = setup({ retryGrace: 0 });
    const code = await codeFor(sentinel);
    const tokens = jsonOf(await exchange(code)) as { access_token: string; refresh_token: string };
    const otherAccount = await postForm(
      sentinel,
      `/sentinel/api/account/${OTHER_ACCOUNT}/token`,
      new URLSearchParams({ grant_type: 'authorization_code', code, client_id: OTHER_CLIENT_ID, client_secret: OTHER_SECRET }).toString(),
    );
    const publicClient = await exchange(code, { id: PUBLIC_CLIENT_ID });
    for (const refused of [otherAccount, publicClient]) {
      expect(jsonOf(refused)).toMatchObject({ error: 'invalid_grant', error_description: 'the code is invalid or has expired' });
    }
    expect(await accepted(tokens.access_token)).toBe(true);
    expect(events.some((event) => event.type === 'code.replayed')).toBe(false);
    // Its own client's replay still revokes what the code gave.
    expect(jsonOf(await exchange(code)).error).toBe('invalid_grant');
    expect(await accepted(tokens.access_token)).toBe(false);
  });

  it('changes nothing when the redemption cannot be written, so the retry succeeds', async () => {
    const { sentinel, store, exchange, events, accepted } = setup({ retryGrace: 0 });
    const code = await codeFor(sentinel);
    store.failing.add('swap');
    expect((await exchange(code)).status).toBe(500);
    store.failing.clear();
    const retry = await exchange(code);
    expect(retry.status).toBe(200);
    expect(events.some((event) => event.type === 'code.replayed')).toBe(false);
    expect(await accepted((jsonOf(retry) as { access_token: string }).access_token)).toBe(true);
  });

  it('an onEvent that throws on token.issued of a code exchange: the tokens are still delivered, onError told, no replay', async () => {
    const sink = hiccupingSink();
    const { sentinel, exchange, accepted, refresh, errors } = setup({ retryGrace: 0, onEvent: sink.onEvent });
    const code = await codeFor(sentinel);
    sink.failNext();
    // The code is spent by now: a 500 would orphan its grant, and the client's retry would be a replay.
    const exchanged = await exchange(code);
    expect(exchanged.status).toBe(200);
    const tokens = jsonOf(exchanged) as { access_token: string; refresh_token: string };
    expect(errors).toEqual([new Error('audit sink hiccup')]);
    expect(await accepted(tokens.access_token)).toBe(true);
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
    expect(sink.events.some((event) => event.type === 'code.replayed')).toBe(false);
  });

  it('refuses a second presentation within the grace window without revoking; later it is a replay', async () => {
    const graceful = setup({ retryGrace: 30 });
    const code = await codeFor(graceful.sentinel);
    const first = jsonOf(await graceful.exchange(code)) as { access_token: string };
    expect(jsonOf(await graceful.exchange(code)).error).toBe('invalid_grant');
    expect(await graceful.accepted(first.access_token)).toBe(true);
    expect(graceful.events.some((event) => event.type === 'code.replayed')).toBe(false);

    const strict = setup({ retryGrace: 0 });
    const code2 = await codeFor(strict.sentinel);
    const tokens = jsonOf(await strict.exchange(code2)) as { access_token: string };
    expect(jsonOf(await strict.exchange(code2)).error).toBe('invalid_grant');
    expect(await strict.accepted(tokens.access_token)).toBe(false);
    expect(strict.events.some((event) => event.type === 'code.replayed')).toBe(true);
  });
});
