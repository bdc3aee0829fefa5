/**
 * The stored form of an authorization code (src/token/code-encoding.ts): the positional array round-trips every
 * field, a code written by the previous version (the named-field object) still redeems with every check it had, and
 * a value that is neither form is refused: the token endpoint answers 500 and spends nothing.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';
import { decodeCodeRecord, encodeCodeRecord } from '../src/token/code-encoding.js';
import { codeKey, type CodeRecord, parseCodeRecord } from '../src/token/code-records.js';
import { jsonOf } from './helpers/direct-flow.js';
import { makeSentinel } from './helpers/fixtures.js';
import { codeThroughSession, MAIN_APP, redeemCode, signInWithSession, tokensOf } from './helpers/logout-flow.js';

const FULL: CodeRecord = {
  accountId: '123456',
  clientId: '6f1c2a9e-3b7d-4c1e-9a2f-5d8e7b6c4a31',
  redirectUri: 'https://app.example.com/cb?tenant="a"',
  redirectUriInRequest: true,
  userId: 'user-"1"\\',
  authTime: 1_795_926_000,
  sid: 'QkXwJRiLdr6fthPlWx4Z_2.glS16xZPP3PdWpJNexKc',
  scope: 'openid offline_access',
  codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  nonce: 'n-0S6_WzA2Mj',
  dpopJkt: '0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I',
  amr: ['pwd', 'otp'],
  acr: 'urn:sentinel:acr:password',
  resources: ['https://api.example.com/'],
  claims: { userinfo: ['email'], idToken: ['name', 'locale'] },
  issuedAt: 1_795_926_049,
};

/** The smallest record: the optional members left out, as an authorize request without them builds it. */
function minimal(): CodeRecord {
  const record: CodeRecord = { ...FULL, redirectUriInRequest: false };
  for (const field of ['sid', 'scope', 'codeChallenge', 'nonce', 'dpopJkt', 'amr', 'acr', 'resources', 'claims'] as const)
    delete record[field];
  return record;
}

describe('code record encoding', () => {
  it('round-trips every field, optional ones included, in well under the length of named fields', () => {
    const encoded = encodeCodeRecord(FULL);
    expect(encoded.startsWith('[')).toBe(true);
    expect(decodeCodeRecord(encoded)).toEqual(FULL);
    expect(encoded.length).toBeLessThan(JSON.stringify(FULL).length * 0.7);
    const small = minimal();
    expect(decodeCodeRecord(encodeCodeRecord(small))).toEqual(small);
    // Absent trailing fields take no room; the times after issuedAt are offsets.
    expect(encodeCodeRecord(small).endsWith(',0,1795926049,-49]')).toBe(true);
    // Members left undefined (the authorize endpoint builds the record as one literal) read as absent.
    expect(decodeCodeRecord(encodeCodeRecord({ ...small, nonce: undefined, dpopJkt: 'jkt' }))).toEqual({ ...small, dpopJkt: 'jkt' });
    // One place of claims only; an empty string is kept, not taken for absence.
    const partial = { ...small, scope: '', claims: { idToken: ['name'] } };
    expect(decodeCodeRecord(encodeCodeRecord(partial))).toEqual(partial);
  });

  it('writes an authTime whose offset would not come back exactly in the named-field form, which reads as it was', () => {
    const odd = { ...minimal(), authTime: 0.1 };
    expect(encodeCodeRecord(odd)).toBe(JSON.stringify(odd));
    expect(decodeCodeRecord(encodeCodeRecord(odd))).toEqual(odd);
    const fraction = { ...minimal(), authTime: 1_795_926_000.25 };
    expect(encodeCodeRecord(fraction).startsWith('[')).toBe(true);
    expect(decodeCodeRecord(encodeCodeRecord(fraction))).toEqual(fraction);
  });

  it('reads the named-field form of the previous version as it was written, on the checks it had', () => {
    expect(decodeCodeRecord(JSON.stringify(FULL))).toEqual(FULL);
    expect(decodeCodeRecord(JSON.stringify(minimal()))).toEqual(minimal());
    const { redirectUri: _uri, ...noUri } = FULL;
    expect(decodeCodeRecord(JSON.stringify(noUri))).toBeNull();
  });

  it('reads a value that is neither form, or an array of the wrong shape, as no code record', () => {
    for (const junk of [null, '{not json', '"a string"', '42', 'null', '[]', '{}', '["123456"]', 'true']) {
      expect(decodeCodeRecord(junk)).toBeNull();
    }
    const changed = (at: number, value: unknown) => {
      const parts = JSON.parse(encodeCodeRecord(FULL)) as unknown[];
      parts[at] = value;
      return JSON.stringify(parts);
    };
    expect(decodeCodeRecord(changed(0, 123456))).toBeNull();
    expect(decodeCodeRecord(changed(4, true))).toBeNull();
    expect(decodeCodeRecord(changed(4, 2))).toBeNull();
    expect(decodeCodeRecord(changed(5, '1795926049'))).toBeNull();
    expect(decodeCodeRecord(changed(9, 43))).toBeNull();
    expect(decodeCodeRecord(changed(11, 'pwd'))).toBeNull();
    expect(decodeCodeRecord(changed(12, ['jkt']))).toBeNull();
    expect(decodeCodeRecord(changed(14, 'https://api.example.com/'))).toBeNull();
    for (const claims of ['email', [['email']], [['email'], 'name'], [[1], []]]) expect(decodeCodeRecord(changed(15, claims))).toBeNull();
    // A member this version does not know (a later version's binding) is not ignored: the code is refused.
    expect(decodeCodeRecord(changed(16, 'later'))).toBeNull();
    // Fewer than the seven members every code has.
    expect(decodeCodeRecord(JSON.stringify((JSON.parse(encodeCodeRecord(FULL)) as unknown[]).slice(0, 6)))).toBeNull();
  });
});

describe('a code stored by the authorize endpoint', () => {
  async function pendingCode() {
    const store = new MemoryStore();
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ store, onError: (error) => errors.push(error) });
    const { cookie, tokens } = await signInWithSession(sentinel);
    const { code, verifier } = await codeThroughSession(sentinel, MAIN_APP, cookie);
    const stored = (await store.get(codeKey(code)))!;
    return { store, sentinel, errors, code, verifier, stored, record: parseCodeRecord(stored)!, sid: tokens.sid };
  }

  it('is stored in the array form and redeems to tokens with its sid', async () => {
    const { sentinel, code, verifier, stored, record, sid } = await pendingCode();
    expect(stored.startsWith('[')).toBe(true);
    expect(record).toMatchObject({ clientId: MAIN_APP.clientId, sid, scope: 'openid', redirectUriInRequest: true });
    expect(record.codeChallenge).toHaveLength(43);
    const response = await redeemCode(sentinel, MAIN_APP, code, verifier);
    expect(response.status, response.body).toBe(200);
    expect(tokensOf(MAIN_APP, jsonOf(response)).sid).toBe(sid);
  });

  it('redeems in the named-field form the previous version wrote, with its nonce, sid and PKCE', async () => {
    const { store, sentinel, code, verifier, record, sid } = await pendingCode();
    const key = codeKey(code);
    // The previous version's form, with a nonce: the ID token carries it, as it did.
    await store.set(key, JSON.stringify({ ...record, nonce: 'n-earlier' }), 60_000);
    const wrongVerifier = await redeemCode(sentinel, MAIN_APP, code, `${verifier.slice(0, -1)}${verifier.endsWith('A') ? 'B' : 'A'}`);
    expect([wrongVerifier.status, jsonOf(wrongVerifier).error]).toEqual([400, 'invalid_grant']);
    const response = await redeemCode(sentinel, MAIN_APP, code, verifier);
    expect(response.status, response.body).toBe(200);
    const tokens = tokensOf(MAIN_APP, jsonOf(response));
    expect(tokens.sid).toBe(sid);
    const idClaims = JSON.parse(Buffer.from(tokens.idToken.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(idClaims.nonce).toBe('n-earlier');
    expect(await store.get(key)).toBeNull();
    expect((await redeemCode(sentinel, MAIN_APP, code, verifier)).status).toBe(400);
  });

  it('is refused with 500 and left unspent when the stored value is malformed (fail closed)', async () => {
    const { store, sentinel, errors, code, verifier, stored } = await pendingCode();
    const key = codeKey(code);
    const parts = JSON.parse(stored) as unknown[];
    parts[4] = 'yes';
    const malformed = JSON.stringify(parts);
    await store.set(key, malformed, 60_000);
    const response = await redeemCode(sentinel, MAIN_APP, code, verifier);
    expect([response.status, jsonOf(response).error]).toEqual([500, 'server_error']);
    expect(jsonOf(response).access_token).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(await store.get(key)).toBe(malformed);
    expect(await store.get(key.replace('code:', 'grant:'))).toBeNull();
  });
});
