/**
 * "Sign out everywhere" (`endUserSessions`) racing a sign-in of the same user: the new session is either ended with
 * the others or listed, so that the next ending finds it; never alive and unlisted, out of reach of every ending
 * (`endUserSessions`, `endSession`, the account page) while it signs the browser in.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, type Sentinel, type SwapEntry } from '../src/index.js';
import { openLogin, postLogin, setCookies, startInteraction } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { MAIN_APP, pkceQuery, sessionWorks } from './helpers/logout-flow.js';

/**
 * A MemoryStore that runs the armed action once, around the next write of a key that starts with `prefix`: just
 * before it lands (`before`) or just after. (Never inside a write of the user's index: the ending would then wait
 * for the very write it interrupts.)
 */
class StoreActingAround extends MemoryStore {
  #armed: (() => Promise<void>) | undefined;

  constructor(
    readonly prefix: string,
    readonly when: 'before' | 'after',
  ) {
    super();
  }

  arm(action: () => Promise<void>): void {
    this.#armed = action;
  }

  async #around<T>(keys: string[], write: () => Promise<T>): Promise<T> {
    const action = this.#armed;
    if (action === undefined || !keys.some((key) => key.startsWith(this.prefix))) return write();
    this.#armed = undefined;
    if (this.when === 'before') await action();
    const result = await write();
    if (this.when === 'after') await action();
    return result;
  }

  override set(key: string, value: string, ttlMs: number): Promise<void> {
    return this.#around([key], () => super.set(key, value, ttlMs));
  }

  override swap(entries: readonly SwapEntry[]): Promise<boolean> {
    return this.#around(
      entries.map((entry) => entry.key),
      () => super.swap(entries),
    );
  }
}

/** Signs in through the login page: the new session's cookie. */
async function signIn(sentinel: Sentinel): Promise<string> {
  const { query } = pkceQuery(MAIN_APP);
  const { interaction } = await startInteraction(sentinel, query);
  const csrf = await openLogin(sentinel, interaction);
  const login = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  expect(login.status).toBe(303);
  const line = setCookies(login).find((value) => value.startsWith('sentinel_session=')) as string;
  return line.slice('sentinel_session='.length).split(';')[0] as string;
}

describe('a sign-in racing "sign out everywhere"', () => {
  // Just before the session's record is written (after the write that lists it, in the order the sign-in used to
  // take), and once both are written (as the code is).
  const moments = [
    { name: 'just before the session record is written', prefix: 'session:', when: 'before' },
    { name: 'once the code is written', prefix: 'code:', when: 'after' },
  ] as const;
  for (const { name, prefix, when } of moments) {
    it(`leaves no session that works unlisted: the ending lands ${name}`, async () => {
      const store = new StoreActingAround(prefix, when);
      const sentinel = makeSentinel({ store });
      let endedMeanwhile = -1;
      store.arm(async () => {
        endedMeanwhile = await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID });
      });
      const cookie = await signIn(sentinel);
      expect(endedMeanwhile).toBeGreaterThanOrEqual(0);
      if (await sessionWorks(sentinel, cookie)) {
        // Alive: then it is listed, and ending the user's sessions ends it.
        expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toHaveLength(1);
        expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(1);
        expect(await sessionWorks(sentinel, cookie)).toBe(false);
      } else {
        expect(endedMeanwhile).toBe(1);
      }
    });
  }
});
