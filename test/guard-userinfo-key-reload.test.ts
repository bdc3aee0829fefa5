/**
 * UserInfo verifies with the service's own access-token verifier, as the bearer guard does. Two in-process instances
 * share one key ring in a real Redis; A revokes its signing key (the successor signs at once) and issues a user token
 * with it. B loaded the ring before that and re-reads it only every `refreshSeconds` (the maximum, 60 s), so only the
 * verifier's one reload for an unknown `kid` lets B accept the token: UserInfo on B must answer 200 with the claims,
 * like `checkBearer`, not 401 until B's next scheduled refresh.
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
  startInteraction,
} from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, basic, CLIENT_ID, CLIENT_SECRET, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
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

/** A user's access token with `openid email`, from the browser flow and the code exchange on `sentinel`. */
async function userToken(sentinel: Sentinel): Promise<string> {
  const { verifier, challenge } = pkcePair();
  const query = authorizeQuery({ scope: 'openid email', code_challenge: challenge, code_challenge_method: 'S256' });
  const { interaction } = await startInteraction(sentinel, query);
  const csrf = await openLogin(sentinel, interaction);
  const login = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  expect(login.status).toBe(303);
  const code = new URL(String(login.headers.location)).searchParams.get('code') as string;
  const exchanged = await exchangeCode(sentinel, code, verifier);
  expect(exchanged.status, exchanged.body).toBe(200);
  return jsonOf(exchanged).access_token as string;
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
  });
});
