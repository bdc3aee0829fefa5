/**
 * Audit events: one complete run of every flow with an `onEvent` collector and a logger collector
 * (test/helpers/audit-sink.ts), then two checks — the typed events carry who and what (account, client, consumer or user,
 * reason), and no event, log line or error report contains any secret value the run used or received.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SentinelEvent, SentinelEventType } from '../src/index.js';
import { createAuditSink, type AuditSink } from './helpers/audit-sink.js';
import { toFetch } from '../adapters/fetch/index.js';
import {
  ACCOUNT_PATH,
  call,
  exchangeCode,
  jsonOf,
  openLogin,
  postForm,
  postLogin,
  type SignedIn,
  signIn,
  startInteraction,
  TOKEN_PATH,
  useRefreshToken,
} from './helpers/direct-flow.js';
import {
  ACCOUNT,
  appTokenPath,
  CC_ONLY_CLIENT_ID,
  CC_ONLY_SECRET,
  CLIENT_ID,
  CLIENT_SECRET,
  CONSUMER_UUID,
  makeSentinel,
  OTHER_SECRET,
  PASSWORD,
  USERNAME,
  USER_ID,
  ccBody,
} from './helpers/fixtures.js';

const WRONG_PASSWORDS = ['wrong-password-0001', 'wrong-password-0002', 'wrong-password-0003', 'wrong-password-0004', 'wrong-password-0005'];

/** Runs every flow once against a fresh sentinel wired to `sink`, registering every secret seen on the way. */
/** Registers every secret a browser sign-in handled: the code, PKCE verifier, interaction, CSRF token and session id. */
function rememberSignIn(sink: AuditSink, signedIn: SignedIn): void {
  sink.labelled('code', signedIn.code);
  sink.labelled('pkce verifier', signedIn.verifier);
  sink.labelled('interaction id', signedIn.interaction);
  sink.labelled('csrf token', signedIn.csrf);
  sink.labelled('session id', signedIn.sessionCookie);
}

/** Registers the tokens of a token response. */
function rememberTokens(sink: AuditSink, body: Record<string, unknown>): void {
  for (const name of ['access_token', 'refresh_token', 'id_token'] as const) {
    const value = body[name];
    if (typeof value === 'string') sink.labelled(name.replace('_', ' '), value);
  }
}

async function runEveryFlow(sink: AuditSink): Promise<void> {
  const sentinel = makeSentinel({ ...sink.options(), throttle: { maxFailures: 3, maxFailuresPerIp: 50, windowSeconds: 900 } });
  sink.labelled('client secret', CLIENT_SECRET, CC_ONLY_SECRET, OTHER_SECRET);
  sink.labelled('password', PASSWORD, ...WRONG_PASSWORDS);

  // v2 consumer-bound client credentials: success, and a wrong secret.
  const appToken = await postForm(sentinel, appTokenPath(CONSUMER_UUID), ccBody());
  expect(appToken.status).toBe(200);
  sink.labelled('access token', jsonOf(appToken).access_token as string);
  const wrongSecret = 'not-the-secret-at-all-0001';
  sink.labelled('client secret', wrongSecret);
  expect(jsonOf(await postForm(sentinel, appTokenPath(CONSUMER_UUID), ccBody({ client_secret: wrongSecret }))).error).toBe(
    'invalid_client',
  );

  // v1 app token.
  const v1 = await postForm(
    sentinel,
    `${ACCOUNT_PATH}/app/token`,
    ccBody({ client_id: CC_ONLY_CLIENT_ID, client_secret: CC_ONLY_SECRET }),
    {
      query: 'v=1.0',
    },
  );
  expect(v1.status).toBe(200);
  sink.labelled('access token', jsonOf(v1).access_token as string);

  // Browser flow: failed logins up to the throttle, then a throttled attempt, on one interaction.
  const failing = await startInteraction(sentinel);
  const csrf = await openLogin(sentinel, failing.interaction);
  sink.labelled('interaction id', failing.interaction);
  sink.labelled('csrf token', csrf);
  for (const password of WRONG_PASSWORDS.slice(0, 3)) {
    expect((await postLogin(sentinel, failing.interaction, { csrf_token: csrf, username: USERNAME, password })).status).toBe(200);
  }
  const throttled = await postLogin(sentinel, failing.interaction, {
    csrf_token: csrf,
    username: USERNAME,
    password: WRONG_PASSWORDS[3] as string,
  });
  expect(throttled.status).toBe(429);
  // Cancel on the same interaction: access_denied back to the app.
  expect((await postLogin(sentinel, failing.interaction, { csrf_token: csrf, cancel: '1' })).status).toBe(303);

  // The rest runs on a second sentinel (same sink), where alice's failure budget is untouched.
  // No retry grace: the flow replays a code and reuses a refresh token at once, and both must raise their events.
  const fresh = makeSentinel({ ...sink.options(), retryGrace: 0 });
  const signedIn = await signIn(fresh);
  rememberSignIn(sink, signedIn);

  // Code exchange, then a replay of the code (revokes what it issued).
  const tokens = await exchangeCode(fresh, signedIn.code, signedIn.verifier);
  expect(tokens.status).toBe(200);
  rememberTokens(sink, jsonOf(tokens));
  expect((await exchangeCode(fresh, signedIn.code, signedIn.verifier)).status).toBe(400);

  // Refresh rotation, then reuse of the old refresh token.
  const second = await signIn(fresh);
  rememberSignIn(sink, second);
  const secondTokens = jsonOf(await exchangeCode(fresh, second.code, second.verifier));
  rememberTokens(sink, secondTokens);
  const rotated = await useRefreshToken(fresh, secondTokens.refresh_token as string);
  expect(rotated.status).toBe(200);
  rememberTokens(sink, jsonOf(rotated));
  expect((await useRefreshToken(fresh, secondTokens.refresh_token as string)).status).toBe(400);

  // Revocation and introspection of a third grant's tokens.
  const third = await signIn(fresh);
  rememberSignIn(sink, third);
  const thirdTokens = jsonOf(await exchangeCode(fresh, third.code, third.verifier));
  rememberTokens(sink, thirdTokens);
  const client = { client_id: CLIENT_ID, client_secret: CLIENT_SECRET };
  const introspected = await postForm(
    fresh,
    `${TOKEN_PATH}/introspect`,
    new URLSearchParams({ token: thirdTokens.access_token as string, ...client }).toString(),
  );
  expect(jsonOf(introspected).active).toBe(true);
  const revoked = await postForm(
    fresh,
    `${TOKEN_PATH}/revoke`,
    new URLSearchParams({ token: thirdTokens.refresh_token as string, ...client }).toString(),
  );
  expect(revoked.status).toBe(200);

  // Logout of the device session.
  const logout = await call(fresh, {
    method: 'POST',
    path: `${ACCOUNT_PATH}/logout`,
    headers: { cookie: `sentinel_session=${third.sessionCookie}` },
  });
  expect(logout.status).toBe(200);

  // A refused authorize request (an error redirect) and a refused token request with a secret in the query.
  expect(
    (await call(fresh, { path: `${ACCOUNT_PATH}/authorize`, query: `client_id=${CLIENT_ID}&response_type=token&state=s` })).status,
  ).toBe(302);
  const inQuery = await postForm(fresh, TOKEN_PATH, 'grant_type=client_credentials', {
    query: `client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}`,
  });
  expect(inQuery.status).toBe(400);
}

function ofType<T extends SentinelEventType>(events: SentinelEvent[], type: T): Array<Extract<SentinelEvent, { type: T }>> {
  return events.filter((event): event is Extract<SentinelEvent, { type: T }> => event.type === type);
}

describe('audit events and logs', () => {
  it('a complete run of every flow emits typed events that name who and what', async () => {
    const sink = createAuditSink();
    await runEveryFlow(sink);
    const { events } = sink;
    for (const event of events) {
      expect(event.accountId).toBe(ACCOUNT);
      expect(typeof event.at).toBe('number');
    }
    const expected: SentinelEventType[] = [
      'token.issued',
      'token.denied',
      'token.revoked',
      'code.issued',
      'code.replayed',
      'refresh.reused',
      'authorize.denied',
      'login.succeeded',
      'login.failed',
      'login.throttled',
      'session.created',
      'session.ended',
    ];
    expect(new Set(events.map((event) => event.type))).toEqual(new Set(expected));

    const consumerToken = ofType(events, 'token.issued').find(
      (event) => event.grantType === 'client_credentials' && event.consumerId !== undefined,
    );
    expect(consumerToken).toMatchObject({ clientId: CLIENT_ID, consumerId: CONSUMER_UUID });
    expect(ofType(events, 'token.issued').find((event) => event.grantType === 'authorization_code')).toMatchObject({
      clientId: CLIENT_ID,
      userId: USER_ID,
    });
    expect(ofType(events, 'token.denied').find((event) => event.error === 'invalid_client')?.reason).toBeTruthy();
    expect(ofType(events, 'code.replayed')[0]).toMatchObject({ clientId: CLIENT_ID, userId: USER_ID });
    expect(ofType(events, 'refresh.reused')[0]).toMatchObject({ clientId: CLIENT_ID, userId: USER_ID });
    expect(ofType(events, 'login.failed')).toHaveLength(3);
    expect(ofType(events, 'login.failed')[0]).toMatchObject({ clientId: CLIENT_ID, reason: 'wrong credentials' });
    // One digest per normalized username, never the typed text (it may be a password typed in the wrong field).
    expect(ofType(events, 'login.failed')[0]!.usernameDigest).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(JSON.stringify(ofType(events, 'login.failed'))).not.toContain(USERNAME);
    expect(ofType(events, 'login.throttled')[0]).toMatchObject({
      clientId: CLIENT_ID,
      usernameDigest: ofType(events, 'login.failed')[0]!.usernameDigest,
      scope: 'username',
    });
    expect(ofType(events, 'login.succeeded')[0]).toMatchObject({ clientId: CLIENT_ID, userId: USER_ID });
    expect(ofType(events, 'session.ended').find((event) => event.reason === 'logout')).toMatchObject({ userId: USER_ID });
    expect(ofType(events, 'authorize.denied').map((event) => event.error)).toEqual(
      expect.arrayContaining(['access_denied', 'unsupported_response_type']),
    );
  });

  it('no event, log line or error report of the run contains a secret, password, code, token, session id or CSRF token', async () => {
    const sink = createAuditSink();
    await runEveryFlow(sink);
    expect(sink.secretCount).toBeGreaterThanOrEqual(25);
    expect(sink.events.length).toBeGreaterThanOrEqual(20);
    expect(sink.leaks()).toEqual([]);
  });

  it('the scan finds a secret planted in an event, a log line or an error report (it can fail)', () => {
    const sink = createAuditSink();
    const options = sink.options();
    sink.labelled('refresh token', 'r-0123456789abcdef0123456789abcdef');
    sink.labelled('password', PASSWORD);
    options.onEvent?.({
      type: 'login.failed',
      at: 1,
      outcome: 'failure',
      accountId: ACCOUNT,
      usernameDigest: 'x',
      reason: `bad r-0123456789abcdef0123456789abcdef`,
    });
    options.logger?.warn(`user typed ${encodeURIComponent(PASSWORD)}`);
    options.onError?.(new Error(`store said ${Buffer.from(PASSWORD).toString('base64url')}`), { route: 'token' });
    const leaks = sink.leaks();
    expect(leaks.map((leak) => [leak.where, leak.secret])).toEqual([
      ['event:login.failed', 'refresh token'],
      ['log', 'password'],
      ['error', 'password'],
    ]);
    expect(leaks.map((leak) => leak.line).join('\n')).not.toContain(PASSWORD);
  });

  it('a failing store goes to onError without the request secrets', async () => {
    const sink = createAuditSink();
    const failing = makeSentinel({
      ...sink.options(),
      store: {
        get: async () => {
          throw new Error('store unreachable');
        },
        set: async () => {
          throw new Error('store unreachable');
        },
        take: async () => {
          throw new Error('store unreachable');
        },
        swap: async () => {
          throw new Error('store unreachable');
        },
        delete: async () => {
          throw new Error('store unreachable');
        },
        increment: async () => {
          throw new Error('store unreachable');
        },
      },
    });
    sink.labelled('client secret', CLIENT_SECRET);
    const code = 'Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmE';
    sink.labelled('code', code);
    const response = await postForm(
      failing,
      TOKEN_PATH,
      new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'https://app.example.com/cb',
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
      }).toString(),
    );
    expect(response.status).toBe(500);
    expect(jsonOf(response).error).toBe('server_error');
    expect(sink.errors.length).toBeGreaterThan(0);
    expect(sink.leaks()).toEqual([]);
  });
});

describe('hooks that answer with a promise (typed void, but an async function type-checks)', () => {
  // Collected here as well as by vitest (which fails the run on one): this test's own assertion then names it.
  let unhandled: unknown[];
  const collect = (reason: unknown): void => {
    unhandled.push(reason);
  };
  beforeEach(() => {
    unhandled = [];
    process.on('unhandledRejection', collect);
  });
  afterEach(() => {
    process.off('unhandledRejection', collect);
  });
  /** Long enough for Node to call a rejection unhandled (it looks once the microtasks of a turn are done). */
  const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));

  it('a rejecting onEvent: the token is answered, the rejection goes to onError under route onEvent, nothing unhandled', async () => {
    const failure = new Error('audit sink down');
    const reported: Array<[unknown, unknown]> = [];
    const sentinel = makeSentinel({
      onEvent: async () => {
        throw failure;
      },
      onError: (error, context) => {
        reported.push([error, context]);
      },
    });
    const response = await postForm(sentinel, TOKEN_PATH, ccBody());
    // Too late to veto: the answer was decided when the promise settled.
    expect(response.status).toBe(200);
    expect(typeof jsonOf(response).access_token).toBe('string');
    await settle();
    expect(unhandled).toEqual([]);
    expect(reported).toEqual([[failure, { route: 'onEvent', accountId: ACCOUNT }]]);
  });

  it('a rejecting onError is swallowed as a throwing one is: a clean 500, nothing unhandled', async () => {
    let told = 0;
    const sentinel = makeSentinel({
      onEvent: () => {
        throw new Error('audit sink down');
      },
      onError: async () => {
        told += 1;
        throw new Error('error reporter down');
      },
    });
    const response = await postForm(sentinel, TOKEN_PATH, ccBody());
    expect(response.status).toBe(500);
    expect(jsonOf(response).error).toBe('server_error');
    await settle();
    expect(told).toBe(1);
    expect(unhandled).toEqual([]);
  });

  it('a rejecting onError of a rejecting onEvent is swallowed too', async () => {
    let told = 0;
    const sentinel = makeSentinel({
      onEvent: async () => {
        throw new Error('audit sink down');
      },
      onError: async () => {
        told += 1;
        throw new Error('error reporter down');
      },
    });
    expect((await postForm(sentinel, TOKEN_PATH, ccBody())).status).toBe(200);
    await settle();
    expect(told).toBe(1);
    expect(unhandled).toEqual([]);
  });

  it('a rejecting logger.warn is swallowed: warnings at start-up and from an adapter leave nothing unhandled', async () => {
    const warned: string[] = [];
    const sentinel = makeSentinel({
      logger: {
        warn: async (message: string) => {
          warned.push(message);
          throw new Error('log shipper down');
        },
      },
    });
    // The fetch adapter warns once when it is given no way to read the client address.
    toFetch(sentinel);
    await settle();
    expect(warned.some((message) => message.includes('ip'))).toBe(true);
    expect(unhandled).toEqual([]);
  });
});
