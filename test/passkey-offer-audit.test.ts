/**
 * A passkey added at the offer after a password sign-in is a new credential of the user as much as one added on the
 * account page: it signs in at the strongest level from then on, without the password or the TOTP step. The audit
 * trail must show it (`passkey.added`, docs/observability.md), or an operator sees a passkey sign-in by a credential
 * whose addition was never recorded. "Not now" and a refused passkey add nothing and report nothing.
 */
import { describe, expect, it } from 'vitest';
import { MemoryPasskeys, MemoryStore, type SentinelEvent, type SentinelResponse } from '../src/index.js';
import { call, csrfOf, LOGIN_PATH, openLogin, postForm, postLogin, startInteraction, stepCookie } from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, makeSentinel, PASSWORD, USER_ID, USERNAME, PASSKEY_ORIGIN, PASSKEY_RP_ID } from './helpers/fixtures.js';
import { attest, newCredential } from './helpers/software-authenticator.js';

const OFFER = `${LOGIN_PATH}/passkey/register`;

function harness() {
  const passkeys = new MemoryPasskeys();
  const events: SentinelEvent[] = [];
  // The user's TOTP secret: none at the password sign-in; a test gives one meanwhile.
  const totp: { secret: string | null } = { secret: null };
  const sentinel = makeSentinel({
    store: new MemoryStore(),
    users: {
      authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
      totpSecret: async () => totp.secret,
      passkeys,
    },
    passkeys: { offerRegistration: true },
    onEvent: (event) => events.push(event),
  });
  return { sentinel, passkeys, events, totp };
}

type Harness = ReturnType<typeof harness>;

/**
 * Signs in with the password up to the offer; `options` posts for creation options, `challenge` answers theirs,
 * `answer` posts the offer's form with the given fields.
 */
async function atOffer(h: Harness): Promise<{
  options: () => Promise<SentinelResponse>;
  challenge: () => Promise<string>;
  answer: (fields: Record<string, string>) => Promise<SentinelResponse>;
}> {
  const { interaction } = await startInteraction(h.sentinel);
  const loginCsrf = await openLogin(h.sentinel, interaction);
  const passed = await postLogin(h.sentinel, interaction, { csrf_token: loginCsrf, username: USERNAME, password: PASSWORD });
  expect(String(passed.headers.location)).toBe(`${OFFER}?interaction=${interaction}`);
  const cookie = stepCookie(passed);
  const query = new URLSearchParams({ interaction });
  const csrf = csrfOf((await call(h.sentinel, { path: OFFER, query, headers: { cookie } })).body);
  const options = () => postForm(h.sentinel, `${OFFER}/options`, `csrf_token=${csrf}`, { query, headers: { cookie } });
  return {
    options,
    async challenge() {
      const answered = await options();
      expect(answered.status).toBe(200);
      return (JSON.parse(String(answered.body)) as { challenge: string }).challenge;
    },
    answer: (fields) =>
      postForm(h.sentinel, OFFER, new URLSearchParams({ csrf_token: csrf, ...fields }).toString(), { query, headers: { cookie } }),
  };
}

const added = (h: Harness) => h.events.filter((event) => event.type === 'passkey.added');

describe('the passkey offer after a password sign-in', () => {
  it('reports the passkey it adds as passkey.added, naming the user and the app', async () => {
    const h = harness();
    const offer = await atOffer(h);
    const credential = newCredential();
    const attestation = attest(credential, { challenge: await offer.challenge(), origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID });
    const done = await offer.answer({ attestation });
    expect(done.status).toBe(303);
    expect(h.passkeys.list({ accountId: ACCOUNT, userId: USER_ID }).map((passkey) => passkey.id)).toEqual([credential.id]);
    expect(added(h)).toEqual([
      expect.objectContaining({ type: 'passkey.added', accountId: ACCOUNT, clientId: CLIENT_ID, userId: USER_ID }),
    ]);
  });

  it('reports nothing for "Not now", nor for an attestation that does not verify', async () => {
    const h = harness();
    const offer = await atOffer(h);
    const wrong = attest(newCredential(), { challenge: await offer.challenge(), origin: 'https://evil.example', rpId: PASSKEY_RP_ID });
    expect((await offer.answer({ attestation: wrong })).status).toBe(400);
    expect((await offer.answer({ skip: '1' })).status).toBe(303);
    expect(h.passkeys.list({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
    expect(added(h)).toEqual([]);
  });

  it('adds no passkey made in a frame of another origin (WebAuthn Level 3 §7.1 step 10); the offer stays open', async () => {
    // The library checks neither field when a passkey is made; the service's pages are never framed.
    const h = harness();
    const offer = await atOffer(h);
    for (const frame of [{ crossOrigin: true }, { crossOrigin: true, topOrigin: 'https://evil.example' }, { topOrigin: PASSKEY_ORIGIN }]) {
      const attestation = attest(newCredential(), {
        challenge: await offer.challenge(),
        origin: PASSKEY_ORIGIN,
        rpId: PASSKEY_RP_ID,
        frame,
      });
      const refused = await offer.answer({ attestation });
      expect(refused.status, JSON.stringify(frame)).toBe(400);
      expect(refused.body).toContain('The passkey was not added.');
    }
    expect(h.passkeys.list({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
    expect(added(h)).toEqual([]);
    const attestation = attest(newCredential(), { challenge: await offer.challenge(), origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID });
    expect((await offer.answer({ attestation })).status).toBe(303);
  });

  it('adds nothing once the user has a factor the password lacks: a passkey or a TOTP secret gained meanwhile', async () => {
    // The offer stays open for the interaction's lifetime; what the user added in that time (another passkey, on the
    // account page or another sign-in's offer; a TOTP secret) must not be skipped by a passkey the password adds.
    const meanwhile: ((h: Harness) => void)[] = [
      (h) => {
        const other = newCredential();
        h.passkeys.save({
          accountId: ACCOUNT,
          userId: USER_ID,
          passkey: { id: other.id, publicKey: other.publicKey, counter: 0, backupEligible: false, createdAt: Date.now() },
        });
      },
      (h) => {
        h.totp.secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      },
    ];
    for (const gain of meanwhile) {
      const h = harness();
      const offer = await atOffer(h);
      const challenge = await offer.challenge();
      gain(h);
      const before = h.passkeys.list({ accountId: ACCOUNT, userId: USER_ID }).map((passkey) => passkey.id);
      // The ceremony started before: its answer saves nothing. A new one is not started.
      const attestation = attest(newCredential(), { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID });
      const refused = await offer.answer({ attestation });
      expect(refused.status).toBe(400);
      expect(refused.body).toContain('The passkey was not added.');
      expect(h.passkeys.list({ accountId: ACCOUNT, userId: USER_ID }).map((passkey) => passkey.id)).toEqual(before);
      expect(added(h)).toEqual([]);
      expect((await offer.options()).status, 'no new ceremony').toBe(403);
      // "Not now" still ends the sign-in.
      expect((await offer.answer({ skip: '1' })).status).toBe(303);
    }
  });
});
