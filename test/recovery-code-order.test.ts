/**
 * A recovery code (`users.recover`) is spent only by a sign-in that goes on with it: the pending step (the sign-in
 * waiting for its second factor) and the interaction are taken first, so a request whose step is gone by then
 * (expired, answered by a concurrent request, replaced by another user's password on the same sign-in, cancelled)
 * leaves the code unused, and nothing ends the sign-in while the code is spent. A hook the rest of the sign-in needs
 * (the passkey offer's `passkeys.list`, the AppStore's `findApp` that the end asks again) is asked before the code. And the code stays strictly single-use: of two
 * concurrent uses exactly one signs in.
 *
 * The step disappears deterministically, not by luck: the form body is produced by a function that removes or
 * replaces the step after the step request has read it and before the code is looked at. MemoryStore, and two
 * instances sharing a real Redis (where pending steps live in production).
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryPasskeys, MemoryStore, type Sentinel, type SentinelEvent, type SentinelResponse, type Store } from '../src/index.js';
import { call, csrfOf, FORM, LOGIN_PATH, openLogin, postLogin, setCookies, startInteraction, stepCookie } from './helpers/direct-flow.js';
import { contextOf } from '../src/http/context.js';
import { ACCOUNT, CLIENT_ID, makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';
import { advanceClock } from './helpers/clock.js';

const TOTP_PATH = `${LOGIN_PATH}/totp`;
const CODE = 'rcv-one-time-0001';
const OTHER_USERNAME = 'bob';
const OTHER_USER_ID = 'u-bob';
const OTHER_PASSWORD = 'bob-password-not-a-fixture';

interface World {
  sentinels: [Sentinel, Sentinel];
  stores: [Store, Store];
  /** Alice's recovery codes not used yet: `recover` deletes from it, once per code. */
  unused: Set<string>;
  /** Calls to `recover` that answered true (a code spent). */
  spent: string[];
  /** Runs inside `recover` before it answers; set by a case. */
  inside: (() => Promise<void>) | undefined;
  failRecover: boolean;
  /** Makes `users.passkeys.list` (asked for the passkey offer) throw, when the world has passkeys. */
  failList: boolean;
  events: SentinelEvent[];
  errors: unknown[];
}

function world(stores: [Store, Store], options: { passkeys?: boolean } = {}): World {
  const w: World = {
    sentinels: undefined as unknown as [Sentinel, Sentinel],
    stores,
    unused: new Set([CODE]),
    spent: [],
    inside: undefined,
    failRecover: false,
    failList: false,
    events: [],
    errors: [],
  };
  const memory = new MemoryPasskeys();
  const passkeys = {
    list: (input: { accountId: string; userId: string }) => {
      if (w.failList) throw new Error('passkey table unavailable');
      return memory.list(input);
    },
    save: memory.save.bind(memory),
    updateCounter: memory.updateCounter.bind(memory),
  };
  const make = (store: Store) =>
    makeSentinel({
      ...(options.passkeys === true ? { passkeys: { offerRegistration: true } } : {}),
      store,
      users: {
        authenticate: async ({ username, password }) => {
          if (username === USERNAME && password === PASSWORD) return { id: USER_ID, secondFactor: 'totp' };
          if (username === OTHER_USERNAME && password === OTHER_PASSWORD) return { id: OTHER_USER_ID, secondFactor: 'totp' };
          return null;
        },
        totpSecret: async () => 'JBSWY3DPEHPK3PXP',
        recover: async ({ userId, code }) => {
          await w.inside?.();
          if (w.failRecover) throw new Error('recovery-code table unavailable');
          // The check and the delete run in one synchronous step: the host's single use.
          if (userId !== USER_ID || !w.unused.delete(code)) return false;
          w.spent.push(code);
          return true;
        },
        ...(options.passkeys === true ? { passkeys } : {}),
      },
      throttle: { maxFailures: 50, maxFailuresPerIp: 10_000, windowSeconds: 900 },
      onEvent: (event) => w.events.push(event),
      onError: (error) => w.errors.push(error),
    });
  const first = make(stores[0]);
  w.sentinels = [first, stores[0] === stores[1] ? first : make(stores[1])];
  return w;
}

interface AtStep {
  sentinel: Sentinel;
  interaction: string;
  loginCsrf: string;
  csrf: string;
  cookie: string;
}

/** A fresh sign-in on `sentinel` past Alice's password, parked at the TOTP step; the step page's CSRF token. */
async function atStep(sentinel: Sentinel): Promise<AtStep> {
  const { interaction } = await startInteraction(sentinel);
  const loginCsrf = await openLogin(sentinel, interaction);
  const response = await postLogin(sentinel, interaction, { csrf_token: loginCsrf, username: USERNAME, password: PASSWORD });
  expect(response.status).toBe(303);
  const cookie = stepCookie(response);
  const page = await call(sentinel, { path: TOTP_PATH, query: new URLSearchParams({ interaction }), headers: { cookie } });
  expect(page.status).toBe(200);
  expect(page.body).toContain('name="recovery_code"');
  return { sentinel, interaction, loginCsrf, csrf: csrfOf(page.body), cookie };
}

/** Posts a recovery code on the step; `before` runs once the step request has read the step, before the code. */
function postRecovery(step: AtStep, code: string, before?: () => Promise<void>): Promise<SentinelResponse> {
  const form = new URLSearchParams({ csrf_token: step.csrf, recovery_code: code }).toString();
  return call(step.sentinel, {
    method: 'POST',
    path: TOTP_PATH,
    query: new URLSearchParams({ interaction: step.interaction }),
    headers: { 'content-type': FORM, cookie: step.cookie },
    body:
      before === undefined
        ? form
        : async () => {
            await before();
            return form;
          },
  });
}

function signedIn(response: SentinelResponse): boolean {
  return response.status === 303 && new URL(String(response.headers.location)).searchParams.has('code');
}

function expectNothingIssued(response: SentinelResponse): void {
  expect(response.status).toBe(400);
  expect(response.headers.location).toBeUndefined();
  expect(setCookies(response).filter((line) => line.startsWith('sentinel_session='))).toEqual([]);
}

function successes(w: World): number {
  return w.events.filter((event) => event.type === 'login.succeeded').length;
}

function cases(name: string, stores: () => [Store, Store]): void {
  describe(`${name}: a recovery code is spent only by the sign-in it completes`, () => {
    it('a step that expired before the code is used leaves the code unused', async () => {
      const w = world(stores());
      const step = await atStep(w.sentinels[0]);
      // The pending step's record goes as its TTL would end it, after the request read it.
      const response = await postRecovery(step, CODE, () => w.stores[1].delete(`pending-sign-in:${step.interaction}`));
      expectNothingIssued(response);
      expect(response.body).toContain('invalid or has expired');
      expect(w.spent).toEqual([]);
      expect(w.unused.has(CODE)).toBe(true);
      // The code still signs in, on a new sign-in.
      expect(signedIn(await postRecovery(await atStep(w.sentinels[1]), CODE))).toBe(true);
      expect(w.spent).toEqual([CODE]);
      expect(w.errors).toEqual([]);
    });

    it("a step replaced by another user's password on the same sign-in is refused, and the code stays unused", async () => {
      const w = world(stores());
      const step = await atStep(w.sentinels[0]);
      let password: SentinelResponse | undefined;
      const response = await postRecovery(step, CODE, async () => {
        password = await postLogin(
          w.sentinels[1],
          step.interaction,
          { csrf_token: step.loginCsrf, username: OTHER_USERNAME, password: OTHER_PASSWORD },
          undefined,
          step.cookie,
        );
      });
      expect(password?.status).toBe(303);
      expectNothingIssued(response);
      expect(w.spent).toEqual([]);
      expect(w.unused.has(CODE)).toBe(true);
      expect(successes(w)).toBe(0);
      expect(signedIn(await postRecovery(await atStep(w.sentinels[1]), CODE))).toBe(true);
      expect(w.errors).toEqual([]);
    });

    it('a step already answered by a concurrent request (the same code posted twice): one sign-in, the code spent once', async () => {
      const w = world(stores());
      const step = await atStep(w.sentinels[0]);
      const twin: AtStep = { ...step, sentinel: w.sentinels[1] };
      // The second post reads the step while the first one's code is being checked.
      let second: Promise<SentinelResponse> | undefined;
      w.inside = async () => {
        w.inside = undefined;
        second = postRecovery(twin, CODE);
        await second;
      };
      const first = await postRecovery(step, CODE);
      const responses = [first, await (second as Promise<SentinelResponse>)];
      expect(responses.filter(signedIn)).toHaveLength(1);
      expectNothingIssued(responses.find((response) => !signedIn(response)) as SentinelResponse);
      expect(w.spent).toEqual([CODE]);
      expect(successes(w)).toBe(1);
      expect(w.errors).toEqual([]);
    });

    it('one code used on two sign-ins at once: exactly one signs in, the other keeps its step', async () => {
      const w = world(stores());
      const steps = [await atStep(w.sentinels[0]), await atStep(w.sentinels[1])];
      // Both posts are inside `recover` before either answers.
      let entered = 0;
      let release: () => void = () => undefined;
      const both = new Promise<void>((resolve) => {
        release = resolve;
      });
      w.inside = async () => {
        entered += 1;
        if (entered === 2) release();
        await both;
      };
      const responses = await Promise.all(steps.map((step) => postRecovery(step, CODE)));
      w.inside = undefined;
      expect(responses.filter(signedIn)).toHaveLength(1);
      const loser = responses.findIndex((response) => !signedIn(response));
      expectNothingIssued(responses[loser] as SentinelResponse);
      expect(responses[loser]?.body).toContain('That code is not correct.');
      expect(w.spent).toEqual([CODE]);
      expect(successes(w)).toBe(1);
      // The losing sign-in's step is still there, unspent: a wrong code never ends it.
      const kept = steps[loser] as AtStep;
      const page = await call(kept.sentinel, {
        path: TOTP_PATH,
        query: new URLSearchParams({ interaction: kept.interaction }),
        headers: { cookie: kept.cookie },
      });
      expect(page.status).toBe(200);
      expect(w.errors).toEqual([]);
    });

    it('a wrong code, then a failing hook, leave the step usable: the right code then signs in', async () => {
      const w = world(stores());
      const step = await atStep(w.sentinels[0]);
      const wrong = await postRecovery(step, 'rcv-not-a-code');
      expectNothingIssued(wrong);
      expect(wrong.body).toContain('That code is not correct.');
      w.failRecover = true;
      const failing = await postRecovery(step, CODE);
      expect(failing.status).toBe(500);
      expect(w.errors).toHaveLength(1);
      w.failRecover = false;
      expect(signedIn(await postRecovery({ ...step, sentinel: w.sentinels[1] }, CODE))).toBe(true);
      expect(w.spent).toEqual([CODE]);
    });

    it('an interaction cancelled on the login form before the code is used leaves the code unused', async () => {
      const w = world(stores());
      const step = await atStep(w.sentinels[0]);
      let cancelled: SentinelResponse | undefined;
      const response = await postRecovery(step, CODE, async () => {
        cancelled = await cancel(w.sentinels[1], step);
      });
      expect(cancelled?.status).toBe(303);
      expectNothingIssued(response);
      expect(response.body).toContain('invalid or has expired');
      expect(w.unused.has(CODE)).toBe(true);
      expect(successes(w)).toBe(0);
      expect(w.errors).toEqual([]);
    });

    it('Cancel posted while the code is being spent finds the sign-in held: the code signs in, Cancel is refused', async () => {
      const w = world(stores());
      const step = await atStep(w.sentinels[0]);
      let cancelled: SentinelResponse | undefined;
      w.inside = async () => {
        w.inside = undefined;
        cancelled = await cancel(w.sentinels[1], step);
      };
      const response = await postRecovery(step, CODE);
      expect(signedIn(response)).toBe(true);
      expect(cancelled?.status).toBe(400);
      expect(cancelled?.headers.location).toBeUndefined();
      expect(w.spent).toEqual([CODE]);
      expect(successes(w)).toBe(1);
      expect(w.errors).toEqual([]);
    });

    it('a wrong code puts the interaction back with the step: the login form still opens', async () => {
      const w = world(stores());
      const step = await atStep(w.sentinels[0]);
      expectNothingIssued(await postRecovery(step, 'rcv-not-a-code'));
      const login = await call(w.sentinels[1], { path: LOGIN_PATH, query: new URLSearchParams({ interaction: step.interaction }) });
      expect(login.status).toBe(200);
      expect(signedIn(await postRecovery({ ...step, sentinel: w.sentinels[1] }, CODE))).toBe(true);
    });

    it('the passkey offer is worked out before the code is spent: a failing passkeys.list spends nothing', async () => {
      const w = world(stores(), { passkeys: true });
      const step = await atStep(w.sentinels[0]);
      w.failList = true;
      const failing = await postRecovery(step, CODE);
      expect(failing.status).toBe(500);
      expect(String(w.errors[0])).toContain('passkey table unavailable');
      expect(w.unused.has(CODE)).toBe(true);
      w.failList = false;
      // The same page tries again, and the sign-in goes on to the offer, its interaction back in place for it.
      const again = await postRecovery({ ...step, sentinel: w.sentinels[1] }, CODE);
      expect(again.status).toBe(303);
      expect(String(again.headers.location)).toContain('/login/passkey/register?interaction=');
      expect(w.spent).toEqual([CODE]);
      const offer = await call(w.sentinels[0], {
        path: `${LOGIN_PATH}/passkey/register`,
        query: new URLSearchParams({ interaction: step.interaction }),
        headers: { cookie: stepCookie(again) },
      });
      expect(offer.status).toBe(200);
    });

    it('a code spent as the sign-in reaches the end of its lifetime still signs in, without the passkey offer', async () => {
      const w = world(stores(), { passkeys: true });
      const step = await atStep(w.sentinels[0]);
      // The interaction's lifetime (interactionTtl, 600 s) ends while users.recover spends the code: the offer's page
      // needs the interaction back, which it can no longer be. The code is gone all the same.
      w.inside = async () => advanceClock(601);
      try {
        const response = await postRecovery(step, CODE);
        expect(w.spent).toEqual([CODE]);
        expect(signedIn(response)).toBe(true);
        expect(successes(w)).toBe(1);
      } finally {
        vi.restoreAllMocks();
      }
    });

    it('the app is looked up before the code is spent: a failing app store spends nothing, and the code signs in later', async () => {
      const w = world(stores());
      const step = await atStep(w.sentinels[0]);
      const restore = [...new Set(w.sentinels)].map((sentinel) => failingFindApp(sentinel));
      const failing = await postRecovery(step, CODE);
      expect(failing.status).toBe(500);
      expect(String(w.errors[0])).toContain('app table unavailable');
      expect(w.unused.has(CODE)).toBe(true);
      expect(successes(w)).toBe(0);
      for (const undo of restore) undo();
      expect(signedIn(await postRecovery({ ...step, sentinel: w.sentinels[1] }, CODE))).toBe(true);
      expect(w.spent).toEqual([CODE]);
    });

    it('an app disabled while the user was at the step is refused before the code is spent', async () => {
      const w = world(stores());
      const step = await atStep(w.sentinels[0]);
      for (const sentinel of new Set(w.sentinels)) expect(await contextOf(sentinel).apps.disableApp?.(ACCOUNT, CLIENT_ID)).toBe(true);
      const refused = await postRecovery(step, CODE);
      expectNothingIssued(refused);
      expect(refused.body).toContain('no longer accepts sign-ins');
      expect(w.unused.has(CODE)).toBe(true);
      expect(successes(w)).toBe(0);
    });
  });
}

/** Makes the service's `apps.findApp` reject until the returned function is called. */
function failingFindApp(sentinel: Sentinel): () => void {
  const apps = contextOf(sentinel).apps;
  const original = apps.findApp;
  apps.findApp = () => Promise.reject(new Error('app table unavailable'));
  return () => {
    apps.findApp = original;
  };
}

/** Cancel on the login form: it needs only the interaction's CSRF token, which the login page shows anyone. */
function cancel(sentinel: Sentinel, step: AtStep): Promise<SentinelResponse> {
  return postLogin(sentinel, step.interaction, { csrf_token: step.loginCsrf, cancel: '1' }, undefined, 'x=1');
}

cases('MemoryStore', () => {
  const store = new MemoryStore();
  return [store, store];
});

await describeOnSharedRedis('recovery-code-order', 'RedisStore (two instances on one Redis)', (newStore) =>
  cases('RedisStore', () => [newStore(), newStore()]),
);
