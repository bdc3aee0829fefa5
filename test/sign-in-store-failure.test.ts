/**
 * The end of a sign-in takes its interaction (single use: of concurrent completions one gets it) and only then writes
 * the session and the code. When one of those writes fails (the store down or out of memory) or a hook vetoes it, the
 * answer is a 500 whose cause reaches onError, and the interaction is put back: the browser's retry of the same form
 * (or the host's of `completeLogin()`) signs the user in, instead of a "link expired" page that sends the user back to
 * the application to start again.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, type SentinelEvent } from '../src/index.js';
import { csrfOf, exchangeCode, jsonOf, LOGIN_PATH, call, postLogin, startInteraction, authorizeQuery } from './helpers/direct-flow.js';
import { failingSwaps, writesIndex } from './helpers/failing-swaps.js';
import { makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { pkcePair } from './helpers/pkce.js';

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

  it('keeps a refused completion spent: the interaction of another account does not come back', async () => {
    const sentinel = makeSentinel();
    const { interaction } = await startInteraction(sentinel);
    const refused = await sentinel.completeLogin(interaction, { userId: USER_ID, accountId: 'another-account' });
    expect(refused.status).toBe(400);
    const again = await sentinel.completeLogin(interaction, { userId: USER_ID });
    expect(again.status).toBe(400);
  });
});
