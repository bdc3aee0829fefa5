/**
 * The account page's new sign-in (`?step_up=passkey`: prompt=login at the user's level) on the host's own login page
 * replaces the session the browser held, as a sign-in /authorize asks for does: `completeLogin()` has no cookie and
 * learns the browser's session only from the interaction. Before, that session survived: still live and listed, and
 * the grants issued through it beyond the reach of this browser's sign-out.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryPasskeys, MemoryStore, type Sentinel } from '../src/index.js';
import { ACCOUNT_PATH, call, setCookies } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { HOST_LOGIN, hostInteraction } from './helpers/host-login.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const PAGE = `${ACCOUNT_PATH}/account`;

/** The host's page signs the user in; the session cookie of its answer. */
async function hostCompletes(sentinel: Sentinel, interaction: string, amr: string[]): Promise<string> {
  const response = await sentinel.completeLogin(interaction, { userId: USER_ID, amr });
  expect(response.status).toBe(303);
  expect(response.headers.location).toBe(PAGE);
  const session = setCookies(response).find((line) => line.startsWith('sentinel_session='));
  expect(session, 'a session cookie').toBeDefined();
  return (session as string).split(';')[0] as string;
}

describe('the account page’s new sign-in on the host’s login page', () => {
  it('replaces the session the browser held (step_up=passkey)', async () => {
    const passkeys = new MemoryPasskeys();
    passkeys.save({
      accountId: ACCOUNT,
      userId: USER_ID,
      passkey: { id: 'cred-1', publicKey: 'pQECAyYgASFYIA', counter: 0, createdAt: Date.now() },
    });
    const sentinel = makeSentinel({
      store: new MemoryStore(),
      users: { authenticate: async () => null, passkeys },
      account: { enabled: true },
      login: { url: HOST_LOGIN },
    });
    const earlier = await hostCompletes(sentinel, hostInteraction(await call(sentinel, { path: PAGE })), ['pwd']);
    expect((await call(sentinel, { path: PAGE, headers: { cookie: earlier } })).status).toBe(200);
    // Adding a passkey asks for a new sign-in at the user's level, on the host's page.
    const stepUp = await call(sentinel, { path: PAGE, query: 'step_up=passkey', headers: { cookie: earlier } });
    const fresh = await hostCompletes(sentinel, hostInteraction(stepUp), ['hwk', 'user', 'mfa']);
    expect(fresh).not.toBe(earlier);
    // The earlier session is gone: its cookie signs nothing in (the page asks for a sign-in)...
    const again = await call(sentinel, { path: PAGE, headers: { cookie: earlier } });
    expect(again.status).toBe(303);
    expect(String(again.headers.location)).toMatch(new RegExp(`^${HOST_LOGIN}\\?interaction=`));
    // ... and the new session's page lists only itself.
    const page = await call(sentinel, { path: PAGE, headers: { cookie: fresh } });
    expect(page.status).toBe(200);
    expect(String(page.body).match(/data-sid="/g) ?? []).toHaveLength(1);
  });
});
