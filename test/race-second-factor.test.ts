/**
 * The steps after the password against a second password on the same interaction (issue 30, item 1). A user signs
 * in with their own password and reaches a step (TOTP code, recovery code, passkey offer); while that step's answer
 * is being checked, the password form of the same interaction is posted with *another* user's credentials, which
 * parks the other user at the step. The step that was checked for the first user must not go on with the record
 * stored *now*: that signed the other user in without their second factor.
 *
 * The window is made deterministic, not left to luck: the step's own hook (`users.totpSecret`, `users.recover`) or
 * its request body runs the other password sign-in to completion before it answers, so every round lands the
 * overwrite exactly between the step's read of the pending record and its take. MemoryStore, and a real Redis
 * shared by two instances (the step on one, the password on the other).
 *
 * A recovery code is the exception in order, not in outcome: `users.recover` spends the code, so its step and the
 * interaction are taken before the hook runs (test/recovery-code-order.test.ts). A password inside that hook finds
 * the sign-in held and is refused as a gone link; the step goes on, for the attacker it was shown to, and never
 * yields the victim's tokens.
 */
import { randomBytes } from 'node:crypto';
import { generate, generateSecret } from 'otplib';
import { describe, expect, it } from 'vitest';
import { MemoryPasskeys, MemoryStore, type Sentinel, type SentinelEvent, type SentinelResponse, type Store } from '../src/index.js';
import {
  authorizeQuery,
  call,
  csrfOf,
  exchangeCode,
  FORM,
  jsonOf,
  LOGIN_PATH,
  openLogin,
  postForm,
  postLogin,
  setCookies,
  startInteraction,
  stepCookie,
} from './helpers/direct-flow.js';
import { makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { pkcePair } from './helpers/pkce.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';

const TOTP_PATH = `${LOGIN_PATH}/totp`;
const OFFER_PATH = `${LOGIN_PATH}/passkey/register`;
/** Rounds per case: each one is a sure hit on the old code, so this many show that no ordering slips through. */
const ROUNDS = 20;

/** The attacker of one round: a fresh account each time, so a used TOTP step or recovery code never carries over. */
interface Attacker {
  username: string;
  userId: string;
  password: string;
  secret: string;
  recoveryCode: string;
}

/** Which path a world is set up for: who has a TOTP step, and whether passkeys are offered. */
interface WorldOptions {
  /** The victim (alice) is asked for TOTP after her password. */
  victimTotp: boolean;
  /** Attackers are asked for TOTP after their password. */
  attackerTotp: boolean;
  passkeyOffer: boolean;
}

/** Sentinels over one store, the users behind them, and what happened. */
interface World {
  /** The instance the step is answered on, and the one the other password goes to (the same one on MemoryStore). */
  stepSide: Sentinel;
  passwordSide: Sentinel;
  attackers: Map<string, Attacker>;
  /** Runs inside the step's hook, for the user the step is answered for; set by each round. */
  window: ((userId: string) => Promise<void>) | undefined;
  events: SentinelEvent[];
  errors: unknown[];
  newAttacker(): Attacker;
}

function world(stores: [Store, Store], options: WorldOptions): World {
  const aliceSecret = generateSecret();
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  const attackers = new Map<string, Attacker>();
  const usedRecovery = new Set<string>();
  const passkeys = new MemoryPasskeys();
  const self: World = {
    stepSide: undefined as unknown as Sentinel,
    passwordSide: undefined as unknown as Sentinel,
    attackers,
    window: undefined,
    events,
    errors,
    newAttacker: () => {
      const id = randomBytes(6).toString('hex');
      const attacker: Attacker = {
        username: `mallory-${id}`,
        userId: `u-mallory-${id}`,
        password: `pw-${id}`,
        secret: generateSecret(),
        recoveryCode: `rcv-${id}`,
      };
      attackers.set(attacker.username, attacker);
      return attacker;
    },
  };
  const byId = (userId: string) => [...attackers.values()].find((attacker) => attacker.userId === userId);
  const make = (store: Store) =>
    makeSentinel({
      store,
      users: {
        authenticate: async ({ username, password }) => {
          if (username === USERNAME && password === PASSWORD)
            return { id: USER_ID, ...(options.victimTotp ? { secondFactor: 'totp' } : {}) };
          const attacker = attackers.get(username);
          if (attacker === undefined || attacker.password !== password) return null;
          return { id: attacker.userId, ...(options.attackerTotp ? { secondFactor: 'totp' } : {}) };
        },
        totpSecret: async ({ userId }) => {
          // Users without a second factor have no TOTP secret: a password alone may then add a passkey.
          if (!options.victimTotp && !options.attackerTotp) return null;
          await self.window?.(userId);
          return userId === USER_ID ? aliceSecret : (byId(userId)?.secret ?? null);
        },
        recover: async ({ userId, code }) => {
          await self.window?.(userId);
          const attacker = byId(userId);
          if (attacker === undefined || attacker.recoveryCode !== code || usedRecovery.has(code)) return false;
          usedRecovery.add(code);
          return true;
        },
        ...(options.passkeyOffer ? { passkeys } : {}),
      },
      passkeys: { offerRegistration: options.passkeyOffer },
      // Every round's password sign-ins come from one address: keep the per-address budget out of the way.
      throttle: { maxFailures: 5, maxFailuresPerIp: 10_000, windowSeconds: 900 },
      onEvent: (event) => events.push(event),
      onError: (error) => errors.push(error),
    });
  self.stepSide = make(stores[0]);
  self.passwordSide = stores[0] === stores[1] ? self.stepSide : make(stores[1]);
  return self;
}

/** A fresh interaction (with PKCE), signed in with the attacker's own password: the first step's path and CSRF token. */
async function attackerAtStep(
  w: World,
  attacker: Attacker,
  stepPath: string,
): Promise<{ interaction: string; loginCsrf: string; stepCsrf: string; verifier: string; cookie: string }> {
  const { verifier, challenge } = pkcePair();
  const { interaction } = await startInteraction(w.stepSide, authorizeQuery({ code_challenge: challenge, code_challenge_method: 'S256' }));
  const loginCsrf = await openLogin(w.stepSide, interaction);
  const response = await postLogin(w.stepSide, interaction, {
    csrf_token: loginCsrf,
    username: attacker.username,
    password: attacker.password,
  });
  expect(response.status).toBe(303);
  expect(String(response.headers.location)).toBe(`${stepPath}?interaction=${interaction}`);
  const cookie = stepCookie(response);
  const page = await call(w.stepSide, { path: stepPath, query: new URLSearchParams({ interaction }), headers: { cookie } });
  expect(page.status).toBe(200);
  return { interaction, loginCsrf, stepCsrf: csrfOf(page.body), verifier, cookie };
}

/**
 * The other user's password, posted on the same interaction from the same browser (the login form's token is the
 * interaction's; the browser sends its step cookie, and gets a fresh one for the victim's step).
 */
function victimPassword(w: World, interaction: string, loginCsrf: string, cookie: string): Promise<SentinelResponse> {
  return postLogin(w.passwordSide, interaction, { csrf_token: loginCsrf, username: USERNAME, password: PASSWORD }, undefined, cookie);
}

/** The `sub` of the tokens a code carries, by redeeming it. */
async function subjectOf(w: World, response: SentinelResponse, verifier: string): Promise<string> {
  const code = new URL(String(response.headers.location)).searchParams.get('code');
  expect(code, 'a code in the redirect').toBeTruthy();
  const tokens = await exchangeCode(w.stepSide, code as string, verifier);
  expect(tokens.status).toBe(200);
  const accessToken = String(jsonOf(tokens).access_token);
  const payload = JSON.parse(Buffer.from(accessToken.split('.')[1] ?? '', 'base64url').toString()) as { sub?: string };
  return String(payload.sub);
}

/**
 * What must hold after each round: the step answered for the attacker never yields the victim's tokens; it is
 * refused (the password on the same interaction replaced the step), and the victim is parked at her own TOTP step
 * (or, with no second factor, at her own offer), untouched. No session or code was issued for the victim.
 */
async function expectNoCrossing(
  w: World,
  round: {
    step: SentinelResponse;
    password: SentinelResponse | undefined;
    verifier: string;
    victimStep: string;
    interaction: string;
    cookie: string;
  },
): Promise<void> {
  expect(round.password, 'the other password ran inside the step window').toBeDefined();
  const password = round.password as SentinelResponse;
  if (round.step.status === 303 && new URL(String(round.step.headers.location), 'http://x').searchParams.has('code')) {
    expect(await subjectOf(w, round.step, round.verifier), 'the step checked for the attacker signed in').not.toBe(USER_ID);
  }
  // The decision: a right password on an interaction parked at a step replaces the step; the step in flight is refused.
  expect(round.step.status).toBe(400);
  expect(round.step.headers.location).toBeUndefined();
  expect(setCookies(round.step)).toEqual([]);
  expect(password.status).toBe(303);
  expect(String(password.headers.location)).toBe(`${round.victimStep}?interaction=${round.interaction}`);
  expect(
    setCookies(password).filter((line) => line.startsWith('sentinel_session=')),
    'no session before the victim passes her own step',
  ).toEqual([]);
  // The new step gets a tie of its own: the browser's earlier value answers no step any more.
  const cookie = stepCookie(password);
  expect(cookie, 'a fresh tie for the new step').not.toBe(round.cookie);
  // The victim's parked step is still there, unspent: its page opens.
  const page = await call(w.stepSide, {
    path: round.victimStep,
    query: new URLSearchParams({ interaction: round.interaction }),
    headers: { cookie },
  });
  expect(page.status).toBe(200);
  expect(w.events.filter((event) => event.type === 'login.succeeded' && event.userId === USER_ID)).toEqual([]);
  expect(w.events.filter((event) => event.type === 'session.created' && event.userId === USER_ID)).toEqual([]);
  expect(w.errors).toEqual([]);
}

/**
 * After a recovery round: the step, taken before `users.recover` ran, signed in the attacker it was shown to; the
 * victim's password inside the hook parked her at her own step of a sign-in that has ended, so she got nothing.
 */
async function expectOwnSignIn(
  w: World,
  round: { step: SentinelResponse; password: SentinelResponse | undefined; verifier: string; interaction: string; cookie: string },
  attacker: Attacker,
): Promise<void> {
  expect(round.password, 'the other password ran inside the step window').toBeDefined();
  expect(round.step.status).toBe(303);
  expect(await subjectOf(w, round.step, round.verifier), 'the step signed in the user it was shown to').toBe(attacker.userId);
  const password = round.password as SentinelResponse;
  // The interaction is held while the code is spent: her password finds no sign-in to park her at.
  expect(password.status).toBe(400);
  expect(password.headers.location).toBeUndefined();
  expect(setCookies(password).filter((line) => line.startsWith('sentinel_session='))).toEqual([]);
  // The sign-in the attacker's step ended has no step left.
  const page = await call(w.stepSide, {
    path: TOTP_PATH,
    query: new URLSearchParams({ interaction: round.interaction }),
    headers: { cookie: round.cookie },
  });
  expect(page.status).toBe(400);
  expect(w.events.filter((event) => event.type === 'login.succeeded' && event.userId === USER_ID)).toEqual([]);
  expect(w.events.filter((event) => event.type === 'session.created' && event.userId === USER_ID)).toEqual([]);
  expect(w.errors).toEqual([]);
}

/** One TOTP (or recovery) round: the attacker's right answer, with the victim's password run inside its hook. */
async function totpRound(w: World, recovery: boolean): Promise<void> {
  const attacker = w.newAttacker();
  const { interaction, loginCsrf, stepCsrf, verifier, cookie } = await attackerAtStep(w, attacker, TOTP_PATH);
  let password: SentinelResponse | undefined;
  w.window = async (userId) => {
    if (userId !== attacker.userId || password !== undefined) return;
    password = await victimPassword(w, interaction, loginCsrf, cookie);
  };
  const form: Record<string, string> = recovery
    ? { csrf_token: stepCsrf, recovery_code: attacker.recoveryCode }
    : { csrf_token: stepCsrf, code: await generate({ secret: attacker.secret }) };
  const step = await postForm(w.stepSide, TOTP_PATH, new URLSearchParams(form).toString(), {
    query: new URLSearchParams({ interaction }),
    headers: { cookie },
  });
  w.window = undefined;
  if (recovery) await expectOwnSignIn(w, { step, password, verifier, interaction, cookie }, attacker);
  else await expectNoCrossing(w, { step, password, verifier, victimStep: TOTP_PATH, interaction, cookie });
}

/**
 * One passkey-offer round: the attacker (no TOTP) answers "Not now"; the request body arrives only after the victim
 * (no TOTP either, no passkey yet) was parked at her own offer on the same interaction.
 */
async function offerRound(w: World): Promise<void> {
  const attacker = w.newAttacker();
  const { interaction, loginCsrf, stepCsrf, verifier, cookie } = await attackerAtStep(w, attacker, OFFER_PATH);
  let password: SentinelResponse | undefined;
  const body = async () => {
    password = await victimPassword(w, interaction, loginCsrf, cookie);
    return new URLSearchParams({ csrf_token: stepCsrf, skip: '1' }).toString();
  };
  const step = await call(w.stepSide, {
    method: 'POST',
    path: OFFER_PATH,
    query: new URLSearchParams({ interaction }),
    headers: { 'content-type': FORM, cookie },
    body,
  });
  await expectNoCrossing(w, { step, password, verifier, victimStep: OFFER_PATH, interaction, cookie });
}

/** The same pair sent at the same moment, no hook-driven ordering: the hook only takes ~20 ms, as a slow user store does. */
async function sameMomentRound(w: World): Promise<void> {
  const attacker = w.newAttacker();
  const { interaction, loginCsrf, stepCsrf, verifier, cookie } = await attackerAtStep(w, attacker, TOTP_PATH);
  w.window = (userId) => (userId === attacker.userId ? new Promise((resolve) => setTimeout(resolve, 20)) : Promise.resolve());
  const code = await generate({ secret: attacker.secret });
  const [step] = await Promise.all([
    postForm(w.stepSide, TOTP_PATH, new URLSearchParams({ csrf_token: stepCsrf, code }).toString(), {
      query: new URLSearchParams({ interaction }),
      headers: { cookie },
    }),
    victimPassword(w, interaction, loginCsrf, cookie),
  ]);
  w.window = undefined;
  if (step.status === 303 && new URL(String(step.headers.location)).searchParams.has('code')) {
    expect(await subjectOf(w, step, verifier)).toBe(attacker.userId);
  }
  expect(w.events.filter((event) => event.type === 'login.succeeded' && event.userId === USER_ID)).toEqual([]);
}

function cases(name: string, stores: () => [Store, Store]): void {
  describe(`${name}: a step checked for one user never completes for another`, () => {
    it(`TOTP: the attacker's own right code, the victim's password inside the check (${ROUNDS} rounds)`, async () => {
      const w = world(stores(), { victimTotp: true, attackerTotp: true, passkeyOffer: false });
      for (let round = 0; round < ROUNDS; round += 1) await totpRound(w, false);
    });

    it(`recovery code: same pair, the victim's password inside users.recover: the attacker's own sign-in (${ROUNDS} rounds)`, async () => {
      const w = world(stores(), { victimTotp: true, attackerTotp: true, passkeyOffer: false });
      for (let round = 0; round < ROUNDS; round += 1) await totpRound(w, true);
    });

    it(`passkey offer: "Not now" for the attacker, the victim parked at her offer meanwhile (${ROUNDS} rounds)`, async () => {
      const w = world(stores(), { victimTotp: false, attackerTotp: false, passkeyOffer: true });
      for (let round = 0; round < ROUNDS; round += 1) await offerRound(w);
    });

    it(`sent at the same moment with a 20 ms secret lookup: never the victim's tokens (${ROUNDS} rounds)`, async () => {
      const w = world(stores(), { victimTotp: true, attackerTotp: true, passkeyOffer: false });
      for (let round = 0; round < ROUNDS; round += 1) await sameMomentRound(w);
    });
  });
}

cases('MemoryStore', () => {
  const store = new MemoryStore();
  return [store, store];
});

await describeOnSharedRedis('race-second-factor', 'RedisStore (two instances on one Redis)', (newStore) =>
  cases('RedisStore', () => [newStore(), newStore()]),
);
