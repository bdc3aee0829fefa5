/**
 * UserInfo verifies with the service's own access-token verifier, as the bearer guard does. Two in-process instances
 * share one key ring in a real Redis; A revokes its signing key (the successor signs at once) and issues a user token
 * with it. B loaded the ring before that and re-reads it only every `refreshSeconds` (the maximum, 60 s), so only the
 * verifier's one reload for an unknown `kid` lets B accept the token: UserInfo on B must answer 200 with the claims,
 * like `checkBearer`, not 401 until B's next scheduled refresh. The ID token A signs with that key is an
 * `id_token_hint` B must take the same way, at `/authorize` and at `/end_session` (signing out after a compromise).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSentinel, type Sentinel } from '../src/index.js';
import { revokeEntry } from '../src/keys/keyring/mutations.js';
import { accountRingName } from '../src/keys/keyring/per-account.js';
import { parseEncryptionKey } from '../src/keys/keyring/seal.js';
import { updateRing } from '../src/keys/keyring/storage.js';
import type { RedisStore } from '../src/stores/redis.js';
import {
  ACCOUNT_PATH,
  authorizeQuery,
  call,
  consumerToken,
  exchangeCode,
  jsonOf,
  openLogin,
  postForm,
  postLogin,
  setCookies,
  startInteraction,
} from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, basic, CLIENT_ID, CLIENT_SECRET, PASSWORD, REDIRECT_URI, USER_ID, USERNAME } from './helpers/fixtures.js';
import { kidOf } from './helpers/jwt.js';
import { ALICE } from './helpers/oidc.js';
import { pkcePair } from './helpers/pkce.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';

const USERINFO = `${ACCOUNT_PATH}/userinfo`;
const ENCRYPTION_KEY = randomBytes(32).toString('base64url');

function instance(store: RedisStore, ringName: string, keysPerAccount = false): Sentinel {
  const base = baseOptions();
  return createSentinel(
    baseOptions({
      keys: undefined,
      store,
      keyRotation: {
        encryptionKey: ENCRYPTION_KEY,
        rotateEverySeconds: 3600,
        prePublishSeconds: 360,
        // The longest allowed: within this test only the unknown-kid reload can show B the new key.
        refreshSeconds: 60,
        name: ringName,
      },
      keysPerAccount,
      users: { authenticate: base.users!.authenticate, claims: async ({ userId }) => (userId === USER_ID ? ALICE : null) },
    }),
  );
}

/** What a user's sign-in on one instance leaves: its tokens, and the browser's session cookie (`name=value`). */
interface UserSignIn {
  accessToken: string;
  idToken: string;
  sessionCookie: string;
}

/** A user's tokens with `openid email`, from the browser flow and the code exchange on `sentinel`. */
async function userSignIn(sentinel: Sentinel): Promise<UserSignIn> {
  const { verifier, challenge } = pkcePair();
  const query = authorizeQuery({ scope: 'openid email', code_challenge: challenge, code_challenge_method: 'S256' });
  const { interaction } = await startInteraction(sentinel, query);
  const csrf = await openLogin(sentinel, interaction);
  const login = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  expect(login.status).toBe(303);
  const code = new URL(String(login.headers.location)).searchParams.get('code') as string;
  const exchanged = await exchangeCode(sentinel, code, verifier);
  expect(exchanged.status, exchanged.body).toBe(200);
  const tokens = jsonOf(exchanged);
  const session = setCookies(login).find((line) => line.startsWith('sentinel_session='));
  expect(session, 'a session cookie').toBeTruthy();
  return {
    accessToken: tokens.access_token as string,
    idToken: tokens.id_token as string,
    sessionCookie: (session as string).split(';')[0] as string,
  };
}

/** A user's access token with `openid email` (see {@link userSignIn}). */
async function userToken(sentinel: Sentinel): Promise<string> {
  return (await userSignIn(sentinel)).accessToken;
}

/** `prompt=none` at /authorize with the browser's session cookie and, when given, an `id_token_hint`. */
async function silentAuthorize(sentinel: Sentinel, sessionCookie: string, idTokenHint?: string): Promise<URLSearchParams> {
  const { challenge } = pkcePair();
  const query = authorizeQuery({ scope: 'openid', prompt: 'none', code_challenge: challenge, code_challenge_method: 'S256' });
  if (idTokenHint !== undefined) query.set('id_token_hint', idTokenHint);
  const response = await call(sentinel, { path: `${ACCOUNT_PATH}/authorize`, query, headers: { cookie: sessionCookie } });
  expect(response.status, response.body).toBe(302);
  const location = new URL(String(response.headers.location));
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
  return location.searchParams;
}

/**
 * On instances that have not loaded the key of `signedIn`'s ID token (two, so that each endpoint does its own reload):
 * /authorize takes it as `id_token_hint` (a code for the user's session, not invalid_request), and /end_session signs
 * the user out with it (not 400).
 */
async function signOutWithHint(a: Sentinel, b: Sentinel, c: Sentinel, signedIn: UserSignIn): Promise<void> {
  const { idToken, sessionCookie } = signedIn;
  for (const stale of [b, c]) {
    expect(
      stale.jwks().keys.map((key) => key.kid),
      'not loaded the new key yet',
    ).not.toContain(kidOf(idToken));
  }
  const silent = await silentAuthorize(b, sessionCookie, idToken);
  expect(silent.get('error_description') ?? '', 'B takes the hint').toBe('');
  expect(silent.get('code')).toBeTruthy();

  const logout = await call(c, {
    path: `${ACCOUNT_PATH}/end_session`,
    query: new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: REDIRECT_URI, state: 'bye' }),
    headers: { cookie: sessionCookie },
  });
  expect(logout.status, logout.body).toBe(303);
  expect(logout.headers.location).toBe(`${REDIRECT_URI}?state=bye`);
  // The session is over on every instance: A has no session left to answer prompt=none with.
  expect((await silentAuthorize(a, sessionCookie)).get('error')).toBe('login_required');
}

await describeOnSharedRedis('guard-userinfo-key-reload', 'UserInfo on another instance after an emergency key revocation', (newStore) => {
  describe('a token signed by a key this instance has not loaded yet', () => {
    it('UserInfo on B reloads the ring once and answers the claims, as the bearer guard does', async () => {
      const ringName = `userinfo-${randomBytes(6).toString('hex')}`;
      const a = instance(newStore(), ringName);
      const b = instance(newStore(), ringName);
      await a.ready();
      await b.ready();

      // Both instances sign and verify with the first key.
      const before = await consumerToken(a);
      expect((await b.verifyAccessToken(before)).client_id).toBe(CLIENT_ID);

      // The emergency revocation on A: its successor signs at once, and B has not read the ring since.
      expect(await a.revokeKey(kidOf(before))).toBe(true);
      const token = await userToken(a);
      expect(kidOf(token)).not.toBe(kidOf(before));
      expect(
        b.jwks().keys.map((key) => key.kid),
        'B has not loaded the new key yet',
      ).not.toContain(kidOf(token));

      const userinfo = await call(b, { path: USERINFO, headers: { authorization: `Bearer ${token}` } });
      expect(userinfo.status, userinfo.body).toBe(200);
      expect(jsonOf(userinfo)).toEqual({ sub: USER_ID, email: ALICE.email, email_verified: ALICE.email_verified });
      // The guard's verifier agrees on B.
      expect((await b.verifyAccessToken(token)).sub).toBe(USER_ID);
    });

    it('introspection and revocation on B find the token too, and the revocation takes', async () => {
      const ringName = `lookup-${randomBytes(6).toString('hex')}`;
      const a = instance(newStore(), ringName);
      const b = instance(newStore(), ringName);
      await a.ready();
      await b.ready();
      const before = await consumerToken(a);
      expect(await a.revokeKey(kidOf(before))).toBe(true);
      const token = await userToken(a);
      expect(b.jwks().keys.map((key) => key.kid)).not.toContain(kidOf(token));
      const client = { headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET) } };
      const body = `token=${token}&token_type_hint=access_token`;

      const introspected = await postForm(b, `${ACCOUNT_PATH}/token/introspect`, body, client);
      expect(introspected.status, introspected.body).toBe(200);
      expect(jsonOf(introspected)).toMatchObject({ active: true, sub: USER_ID, client_id: CLIENT_ID });

      // RFC 7009 answers 200 whether or not it found the token: what shows it took is that the token now fails.
      expect((await postForm(b, `${ACCOUNT_PATH}/token/revoke`, body, client)).status).toBe(200);
      await expect(a.verifyAccessToken(token)).rejects.toMatchObject({ code: 'invalid_token' });
      expect(jsonOf(await postForm(b, `${ACCOUNT_PATH}/token/introspect`, body, client))).toEqual({ active: false });
    });

    it('an id_token_hint of that key works on the others: /authorize takes it and /end_session signs out', async () => {
      const ringName = `hint-${randomBytes(6).toString('hex')}`;
      const [a, b, c] = [instance(newStore(), ringName), instance(newStore(), ringName), instance(newStore(), ringName)];
      await Promise.all([a.ready(), b.ready(), c.ready()]);
      // ID tokens have a signing key of their own algorithm: the one revoked is the one that signed the last ID token.
      const before = (await userSignIn(a)).idToken;
      expect(await a.revokeKey(kidOf(before))).toBe(true);
      const signedIn = await userSignIn(a);
      expect(kidOf(signedIn.idToken)).not.toBe(kidOf(before));

      await signOutWithHint(a, b, c, signedIn);
    });

    it("with keysPerAccount, UserInfo on B reloads the account's own ring for a key it has not loaded", async () => {
      const ringName = `userinfo-${randomBytes(6).toString('hex')}`;
      const store = newStore();
      const b = instance(newStore(), ringName, true);
      await b.ready();
      // B creates and loads the account's ring by signing for the account.
      const before = await consumerToken(b);
      // An emergency revocation of the account's signing key by an operator (what `keys revoke --account` writes):
      // a successor signs at once, and B re-reads the account's ring only every refreshSeconds.
      const revoked = await updateRing(store, accountRingName(ringName, ACCOUNT), (current) =>
        revokeEntry(current, kidOf(before), Date.now(), parseEncryptionKey(ENCRYPTION_KEY)),
      );
      expect(revoked?.keys.find((key) => key.kid === kidOf(before))?.revokedAt).toBeTypeOf('number');
      // A starts after the revocation and signs the user's token with the successor.
      const a = instance(store, ringName, true);
      await a.ready();
      const token = await userToken(a);
      expect(kidOf(token)).not.toBe(kidOf(before));

      const userinfo = await call(b, { path: USERINFO, headers: { authorization: `Bearer ${token}` } });
      expect(userinfo.status, userinfo.body).toBe(200);
      expect(jsonOf(userinfo)).toEqual({ sub: USER_ID, email: ALICE.email, email_verified: ALICE.email_verified });
      expect((await b.verifyAccessToken(token)).sub).toBe(USER_ID);
    });

    it("with keysPerAccount, an id_token_hint of the account's new key works on the others at /authorize and /end_session", async () => {
      const ringName = `hint-${randomBytes(6).toString('hex')}`;
      const store = newStore();
      const [b, c] = [instance(newStore(), ringName, true), instance(newStore(), ringName, true)];
      await Promise.all([b.ready(), c.ready()]);
      // B creates the account's ring by signing the user's ID token, C loads it; then an operator revokes that key.
      const before = (await userSignIn(b)).idToken;
      await consumerToken(c);
      await updateRing(store, accountRingName(ringName, ACCOUNT), (current) =>
        revokeEntry(current, kidOf(before), Date.now(), parseEncryptionKey(ENCRYPTION_KEY)),
      );
      const a = instance(store, ringName, true);
      await a.ready();
      const signedIn = await userSignIn(a);
      expect(kidOf(signedIn.idToken)).not.toBe(kidOf(before));

      await signOutWithHint(a, b, c, signedIn);
    });
  });
});
