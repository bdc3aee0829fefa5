/**
 * Two right TOTP codes of one user checked at once (issue 30, the read-await-act review): the user's current code
 * on one sign-in, and an older one (the previous 30-second step, still inside the drift window: a code seen over the
 * shoulder) on another sign-in that also passed the password. The older code must be refused once the newer one was
 * accepted (RFC 6238 §5.2); the check read the newest accepted step first and wrote it back later, so the older code
 * slipped in between (and moved the newest step back). The interleaving is made deterministic: the store runs the
 * whole newer sign-in right after the older one read the newest accepted step. MemoryStore and a real Redis.
 */
import { randomBytes } from 'node:crypto';
import { generate, generateSecret } from 'otplib';
import { describe, expect, it } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelResponse, type Store } from '../src/index.js';
import {
  call,
  csrfOf,
  LOGIN_PATH,
  openLogin,
  postForm,
  postLogin,
  setCookies,
  startInteraction,
  stepCookie,
} from './helpers/direct-flow.js';
import { makeSentinel, PASSWORD, USERNAME } from './helpers/fixtures.js';
import { racingStore } from './helpers/racing-store.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';

const TOTP_PATH = `${LOGIN_PATH}/totp`;
const ROUNDS = 5;

/** A sign-in of the user parked at the TOTP step: its interaction and the step's CSRF token. */
async function atTotpStep(sentinel: Sentinel): Promise<{ interaction: string; csrf: string; cookie: string }> {
  const { interaction } = await startInteraction(sentinel);
  const loginCsrf = await openLogin(sentinel, interaction);
  const response = await postLogin(sentinel, interaction, { csrf_token: loginCsrf, username: USERNAME, password: PASSWORD });
  expect(response.status).toBe(303);
  const cookie = stepCookie(response);
  const page = await call(sentinel, { path: TOTP_PATH, query: new URLSearchParams({ interaction }), headers: { cookie } });
  return { interaction, csrf: csrfOf(page.body), cookie };
}

function postCode(
  sentinel: Sentinel,
  step: { interaction: string; csrf: string; cookie: string },
  code: string,
): Promise<SentinelResponse> {
  return postForm(sentinel, TOTP_PATH, new URLSearchParams({ csrf_token: step.csrf, code }).toString(), {
    query: new URLSearchParams({ interaction: step.interaction }),
    headers: { cookie: step.cookie },
  });
}

function signedIn(response: SentinelResponse): boolean {
  return response.status === 303 && setCookies(response).some((line) => line.startsWith('sentinel_session='));
}

/** Waits until at least 3 s remain in the current 30-second step, so the two codes stay one step apart. */
async function awayFromStepEdge(): Promise<void> {
  const intoStep = (Date.now() / 1000) % 30;
  if (intoStep > 27) await new Promise((resolve) => setTimeout(resolve, (30.2 - intoStep) * 1000));
}

function cases(name: string, storeOf: () => Store): void {
  describe(`${name}: an older right code checked together with a newer one`, () => {
    it(`is refused once the newer one is accepted, however the checks interleave (${ROUNDS} users)`, async () => {
      for (let round = 0; round < ROUNDS; round += 1) {
        const secret = generateSecret();
        const store = racingStore(storeOf(), (key) => key.startsWith('totp-last:'));
        const userId = `u-${randomBytes(6).toString('hex')}`;
        const sentinel = makeSentinel({
          store,
          users: {
            authenticate: async ({ username, password }) =>
              username === USERNAME && password === PASSWORD ? { id: userId, secondFactor: 'totp' } : null,
            totpSecret: async () => secret,
          },
        });
        const own = await atTotpStep(sentinel);
        const other = await atTotpStep(sentinel);
        await awayFromStepEdge();
        const now = Date.now() / 1000;
        const newer = await generate({ secret, epoch: now });
        const older = await generate({ secret, epoch: now - 30 });
        let newerResponse: SentinelResponse | undefined;
        store.arm(async () => {
          newerResponse = await postCode(sentinel, own, newer);
        });
        const olderResponse = await postCode(sentinel, other, older);
        expect(newerResponse, 'the newer code was checked inside the window').toBeDefined();
        expect(signedIn(newerResponse as SentinelResponse)).toBe(true);
        expect(signedIn(olderResponse), 'the older code signed in after the newer one was accepted').toBe(false);
        expect(olderResponse.status).toBe(400);
        expect(olderResponse.body).toContain('That code is not correct. Try again.');
      }
    });
  });
}

cases('MemoryStore', () => new MemoryStore());

await describeOnSharedRedis('race-totp-order', 'RedisStore', (newStore) => cases('RedisStore', newStore));
