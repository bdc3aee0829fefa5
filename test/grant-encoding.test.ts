/**
 * The stored form of a grant (src/token/grant-encoding.ts): the positional array round-trips every field, a grant
 * written by an earlier version (the named-field object) still reads and still works end to end, and a value that
 * is neither is no grant (its tokens refused).
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';
import { digest, shortDigest } from '../src/lib/random-secrets.js';
import { sessionSid } from '../src/sessions/sid.js';
import { decodeGrant, encodeGrant } from '../src/token/grant-encoding.js';
import type { GrantRecord } from '../src/token/grant-records.js';
import { jsonOf, postForm, TOKEN_PATH, useRefreshToken } from './helpers/direct-flow.js';
import { CLIENT_ID, CLIENT_SECRET, makeSentinel, REDIRECT_URI } from './helpers/fixtures.js';
import { codeFor } from './helpers/oauth.js';

const FULL: GrantRecord = {
  accountId: '123456',
  clientId: '6f1c2a9e-3b7d-4c1e-9a2f-5d8e7b6c4a31',
  userId: 'user-"1"',
  scope: 'openid offline_access',
  authTime: 1_795_926_000,
  amr: ['pwd', 'otp'],
  sid: 'QkXwJRiLdr6fthPlWx4Z_2.glS16xZPP3PdWpJNexKcuYvLLedRo_9rQmjvsPwy_Ok',
  changedAt: 1_795_926_049,
  absoluteExpiresAt: 1_798_518_049,
  accessUntil: 1_795_929_649,
  refresh: {
    gen: 3,
    family: 'eZzgHLUp87uaA91EUyBmOpC6hy_GkP5AToLA8sVEUGc',
    current: 'vAEqxDLeA6lqXobcXSafkzGxiZ5MycIPm-caRZPJiDQ',
    issuedAt: 1_795_926_049,
    expiresAt: 1_797_135_649,
    jkt: '0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I',
  },
  revokedJtis: { 'jti-1': 1_795_929_000 },
  resources: ['https://api.example.com/'],
  acr: 'urn:sentinel:acr:password',
};

describe('grant encoding', () => {
  it('round-trips every field, optional ones included, in about half the length of named fields', () => {
    const encoded = encodeGrant(FULL);
    expect(encoded.startsWith('[')).toBe(true);
    expect(decodeGrant(encoded)).toEqual(FULL);
    const minimal: GrantRecord = { ...FULL, refresh: null };
    for (const field of ['scope', 'amr', 'sid', 'revokedJtis', 'resources', 'acr'] as const) delete minimal[field];
    expect(decodeGrant(encodeGrant(minimal))).toEqual(minimal);
    expect(encodeGrant(minimal).endsWith(',3600]')).toBe(true); // absent trailing fields take no room
    const { jkt: _jkt, ...unbound } = FULL.refresh!;
    expect(decodeGrant(encodeGrant({ ...FULL, refresh: unbound }))).toEqual({ ...FULL, refresh: unbound });
    expect(encoded.length).toBeLessThan(JSON.stringify(FULL).length * 0.7);
  });

  it('keeps the grant type of a device code grant last, and reads a grant without it as a code grant', () => {
    const device = { ...FULL, claims: { userinfo: ['email'] }, grantType: 'urn:ietf:params:oauth:grant-type:device_code' as const };
    const encoded = encodeGrant(device);
    expect(decodeGrant(encoded)).toEqual(device);
    const parts = JSON.parse(encoded) as unknown[];
    expect(parts).toHaveLength(16);
    // Grants of earlier versions (fifteen fields or fewer) have no grant type: code grants, as they were read then.
    expect(decodeGrant(JSON.stringify(parts.slice(0, 15)))?.grantType).toBeUndefined();
    // Without claims, the place keeps its position; a value this service never writes is no grant (fail closed).
    const { claims: _claims, ...withoutClaims } = device;
    expect(JSON.parse(encodeGrant(withoutClaims))[14]).toBeNull();
    expect(decodeGrant(encodeGrant(withoutClaims))).toEqual(withoutClaims);
    expect(decodeGrant(JSON.stringify([...parts.slice(0, 15), 'authorization_code']))).toBeNull();
  });

  it('keeps the claims a request named in a field after acr, readable both ways across versions', () => {
    const claims = { userinfo: ['email'], idToken: ['name', 'locale'] };
    const encoded = encodeGrant({ ...FULL, claims });
    expect(decodeGrant(encoded)).toEqual({ ...FULL, claims });
    const parts = JSON.parse(encoded) as unknown[];
    expect(parts).toHaveLength(15);
    expect(parts[14]).toEqual([['email'], ['name', 'locale']]);
    // The previous version wrote (and reads) the first fourteen fields: its grants read here without claims, and a
    // grant written here reads there as the same grant without them.
    expect(encodeGrant(FULL)).toBe(JSON.stringify(parts.slice(0, 14)));
    expect(decodeGrant(JSON.stringify(parts.slice(0, 14)))).toEqual(FULL);
    // One place only, with acr absent: the places keep their positions.
    const { acr: _acr, ...withoutAcr } = FULL;
    const onlyUserinfo = encodeGrant({ ...withoutAcr, claims: { userinfo: ['email'] } });
    expect(JSON.parse(onlyUserinfo)[13]).toBeNull();
    expect(decodeGrant(onlyUserinfo)).toEqual({ ...withoutAcr, claims: { userinfo: ['email'] } });
    // Names the service cannot release are not trusted from the store; a member of the wrong shape is no grant.
    parts[14] = [['email', 'shoe_size'], []];
    expect(decodeGrant(JSON.stringify(parts))).toEqual({ ...FULL, claims: { userinfo: ['email'] } });
    // The sign-in's acr is answered by UserInfo when named there; every ID token has it already.
    parts[14] = [['acr'], ['acr', 'name']];
    expect(decodeGrant(JSON.stringify(parts))).toEqual({ ...FULL, claims: { userinfo: ['acr'], idToken: ['name'] } });
    for (const junk of ['email', [['email']], [['email'], 'name'], [[1], []]]) {
      parts[14] = junk;
      expect(decodeGrant(JSON.stringify(parts))).toBeNull();
    }
  });

  it("stores only the session part of a sid that is its user's, and still reads whole sids of earlier versions", () => {
    const sessionDigest = 'XpeDXWyizeSxPnU69oYix5';
    const own = { ...FULL, sid: sessionSid(FULL.accountId, FULL.userId, sessionDigest) };
    const encoded = encodeGrant(own);
    expect((JSON.parse(encoded) as unknown[])[9]).toBe(sessionDigest);
    expect(decodeGrant(encoded)).toEqual(own);
    // Written whole by an earlier version (and the 43-character session part of its sessions): read as written.
    const earlier = { ...own, sid: sessionSid(FULL.accountId, FULL.userId, 'E'.repeat(43)) };
    const whole = JSON.parse(encodeGrant(own)) as unknown[];
    whole[9] = earlier.sid;
    expect(decodeGrant(JSON.stringify(whole))).toEqual(earlier);
    expect(JSON.stringify(whole).length - encoded.length).toBe(23 + 21);
    // Rewritten (a rotation), the earlier sid keeps its session part: apps know the sid with it.
    expect((JSON.parse(encodeGrant(earlier)) as unknown[])[9]).toBe('E'.repeat(43));
    // A sid of another user's part (never attached) is kept whole; a value that is neither is no grant.
    expect(decodeGrant(encodeGrant(FULL))).toEqual(FULL);
    for (const broken of ['', 'short', 'E'.repeat(30)]) {
      whole[9] = broken;
      expect(decodeGrant(JSON.stringify(whole))).toBeNull();
    }
  });

  it('reads a grant of the earlier named-field form as it was written', () => {
    expect(decodeGrant(JSON.stringify(FULL))).toEqual(FULL);
    // That form predates the claims a request names: such a member is not the service's, and is not trusted.
    expect(decodeGrant(JSON.stringify({ ...FULL, claims: { userinfo: 'email' } }))).toEqual(FULL);
  });

  it('reads a value that is neither form as no grant', () => {
    for (const junk of [
      '{not json',
      '"a string"',
      '42',
      'null',
      '[]',
      '{}',
      '["123456"]',
      JSON.stringify({ ...FULL, refresh: { gen: 'x' } }),
    ]) {
      expect(decodeGrant(junk)).toBeNull();
    }
    const changed = (at: number, value: unknown) => {
      const array = JSON.parse(encodeGrant(FULL)) as unknown[];
      array[at] = value;
      return JSON.stringify(array);
    };
    expect(decodeGrant(changed(4, '1795926049'))).toBeNull();
    expect(decodeGrant(changed(10, [1, 'f']))).toBeNull();
  });
});

describe('a grant stored by an earlier version', () => {
  async function signedIn() {
    const store = new MemoryStore();
    const sentinel = makeSentinel({ store });
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code: await codeFor(sentinel),
      redirect_uri: REDIRECT_URI,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
    const tokens = jsonOf(await postForm(sentinel, TOKEN_PATH, body.toString())) as { access_token: string; refresh_token: string };
    const key = `grant:{${tokens.refresh_token.split('.')[0]}}`;
    return { store, sentinel, tokens, key };
  }

  it('keeps its access token live and its refresh token rotating, and is rewritten in the array form', async () => {
    const { store, sentinel, tokens, key } = await signedIn();
    const grant = decodeGrant(await store.get(key))!;
    await store.set(key, JSON.stringify(grant), 60_000); // the named-field form earlier versions wrote
    await expect(sentinel.verifyAccessToken(tokens.access_token)).resolves.toMatchObject({ client_id: CLIENT_ID });
    const refreshed = await useRefreshToken(sentinel, tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    expect(await store.get(key)).toMatch(/^\[/);
    expect(decodeGrant(await store.get(key))).toMatchObject({ userId: grant.userId, refresh: { gen: 1, family: grant.refresh!.family } });
  });

  it('stores short (22-character) digests of the refresh secrets in a new grant, 42 characters fewer than full ones', async () => {
    const { store, tokens, key } = await signedIn();
    const [, , family, secret] = tokens.refresh_token.split('.') as [string, string, string, string];
    const raw = (await store.get(key))!;
    const refresh = decodeGrant(raw)!.refresh!;
    expect(refresh.family).toBe(shortDigest(family));
    expect(refresh.current).toBe(shortDigest(secret));
    expect(refresh.family).toHaveLength(22);
    const full = encodeGrant({ ...decodeGrant(raw)!, refresh: { ...refresh, family: digest(family), current: digest(secret) } });
    expect(full.length - raw.length).toBe(42);
  });

  it('still refreshes a grant holding the full digests of an earlier version, and its rotation stores them short', async () => {
    const { store, sentinel, tokens, key } = await signedIn();
    const [, , family, secret] = tokens.refresh_token.split('.') as [string, string, string, string];
    const grant = decodeGrant(await store.get(key))!;
    await store.set(
      key,
      encodeGrant({ ...grant, refresh: { ...grant.refresh!, family: digest(family), current: digest(secret) } }),
      60_000,
    );
    await expect(sentinel.verifyAccessToken(tokens.access_token)).resolves.toMatchObject({ client_id: CLIENT_ID });
    const refreshed = await useRefreshToken(sentinel, tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    const next = (jsonOf(refreshed) as { refresh_token: string }).refresh_token;
    // The family digest is cut to its prefix (the short digest) without the family secret; the new secret's is short.
    expect(decodeGrant(await store.get(key))!.refresh).toMatchObject({
      gen: 1,
      family: shortDigest(family),
      current: shortDigest(next.split('.')[3]!),
    });
    expect((await useRefreshToken(sentinel, next)).status).toBe(200);
    // The first token, of the family and rotated twice since, is reuse: the family digest still vouches for it.
    const reused = await useRefreshToken(sentinel, tokens.refresh_token);
    expect(jsonOf(reused).error).toBe('invalid_grant');
    expect(await store.get(key)).toBeNull();
  });

  it('refuses a refresh token against a stored digest of neither length (fail closed)', async () => {
    const { store, sentinel, tokens, key } = await signedIn();
    const [, , family, secret] = tokens.refresh_token.split('.') as [string, string, string, string];
    const grant = decodeGrant(await store.get(key))!;
    for (const refresh of [
      { ...grant.refresh!, current: digest(secret).slice(0, 30) },
      { ...grant.refresh!, family: digest(family).slice(0, 21) },
      { ...grant.refresh!, current: '' },
    ]) {
      await store.set(key, encodeGrant({ ...grant, refresh }), 60_000);
      const refused = await useRefreshToken(sentinel, tokens.refresh_token);
      expect(refused.status).toBe(400);
      expect(jsonOf(refused).error).toBe('invalid_grant');
    }
  });

  it('refuses the tokens of a grant whose stored value cannot be read (no grant), without a server error', async () => {
    const { store, sentinel, tokens, key } = await signedIn();
    await store.set(key, '{"accountId":"123456"}', 60_000);
    await expect(sentinel.verifyAccessToken(tokens.access_token)).rejects.toMatchObject({ code: 'invalid_token' });
    const refreshed = await useRefreshToken(sentinel, tokens.refresh_token);
    expect(refreshed.status).toBe(400);
    expect(jsonOf(refreshed).error).toBe('invalid_grant');
  });
});
