/**
 * The two grants that prove a consumer with a trusted brand issuer's JWT (RFC 7523 JWT bearer, RFC 8693 token
 * exchange of an `id_token` / `jwt`): the consumer-bound token they issue, and one named test per refusal. Each
 * refusal test was run with its check removed and failed (see the note of issue 32).
 */
import { generateKeyPairSync, sign as nodeSign } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { hashClientSecret, type JWK, MemoryAppStore, MemoryStore, type SentinelOptions } from '../src/index.js';
import {
  basic,
  CLIENT_ID,
  CLIENT_SECRET,
  CONSUMER_HEX,
  CONSUMER_UUID,
  makeSentinel,
  OTHER_ACCOUNT,
  appTokenPath,
} from './helpers/fixtures.js';
import { jsonOf, postForm, recordingStore } from './helpers/direct-flow.js';
import {
  ACCOUNT_ISSUER,
  BOT,
  BOT_CLIENT_ID,
  BRAND_ISSUER,
  type BrandKey,
  botApp,
  brandJWT,
  brandKey,
  exchangeOptions,
  JWT_BEARER,
  TOKEN_EXCHANGE,
  TOKEN_PATH,
  TYPE,
} from './helpers/exchange.js';
import { ACCOUNT } from './helpers/fixtures.js';

const key = await brandKey();

function sentinelWith(overrides: Partial<SentinelOptions> = {}, brand: BrandKey = key) {
  return makeSentinel(exchangeOptions(brand, overrides));
}

/** The brand JWT (or whatever stood for it) the last request sent: no refusal may echo any part of it. */
let lastSent: string | undefined;

function bearer(sentinel: ReturnType<typeof makeSentinel>, assertion: string, extra: Record<string, string> = {}) {
  lastSent = assertion;
  return postForm(sentinel, TOKEN_PATH, new URLSearchParams({ grant_type: JWT_BEARER, assertion, ...BOT, ...extra }).toString());
}

function exchange(sentinel: ReturnType<typeof makeSentinel>, subjectToken: string, extra: Record<string, string> = {}) {
  lastSent = subjectToken;
  return postForm(
    sentinel,
    TOKEN_PATH,
    new URLSearchParams({
      grant_type: TOKEN_EXCHANGE,
      subject_token: subjectToken,
      subject_token_type: TYPE.idToken,
      ...BOT,
      ...extra,
    }).toString(),
  );
}

async function expectRefused(
  response: Awaited<ReturnType<typeof bearer>>,
  error: string,
  description: RegExp,
  token?: string,
): Promise<void> {
  expect(response.status, response.body).toBe(400);
  expect(response.headers['cache-control']).toBe('no-store');
  const body = jsonOf(response);
  expect(body.error).toBe(error);
  expect(String(body.error_description)).toMatch(description);
  // Every part of what was sent long enough to be recognised (a short one, like `e30` for `{}`, could be any text's).
  for (const part of (token ?? lastSent ?? '').split('.')) {
    if (part.length >= 8) expect(response.body, 'the refusal echoes the token').not.toContain(part);
  }
}

/** A compact JWS signed with node:crypto, for keys jose will not sign with (an RSA key under 2048 bits). */
function nodeSignedJWT(alg: string, kid: string, claims: Record<string, unknown>, sign: (input: Buffer) => Buffer): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${part({ alg, kid })}.${part(claims)}`;
  return `${input}.${sign(Buffer.from(input)).toString('base64url')}`;
}

function freshClaims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return { iss: BRAND_ISSUER, sub: CONSUMER_UUID, aud: ACCOUNT_ISSUER, iat: now, exp: now + 60, ...overrides };
}

describe('JWT bearer grant (RFC 7523) with a trusted brand issuer', () => {
  it('issues the consumer-bound token the v2 endpoint issues, accepted by the guard for that consumer', async () => {
    const sentinel = sentinelWith();
    const assertion = await brandJWT(key);
    const response = await bearer(sentinel, assertion);
    expect(response.status, response.body).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const body = jsonOf(response);
    // RFC 6749 §5.1: `scope` is REQUIRED when the issued one differs from the request's (here none: the app's).
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'read write' });
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    const claims = decodeJwt(body.access_token as string);
    // The v2 token of the same app and consumer has exactly these claims (values of time and jti aside).
    const v2 = await postForm(sentinel, appTokenPath(), 'grant_type=client_credentials', {
      headers: { authorization: basic(BOT_CLIENT_ID, CLIENT_SECRET) },
    });
    const v2Claims = decodeJwt(jsonOf(v2).access_token as string);
    expect(Object.keys(claims).sort()).toEqual(Object.keys(v2Claims).sort());
    expect({ ...claims, iat: 0, exp: 0, jti: '' }).toEqual({ ...v2Claims, iat: 0, exp: 0, jti: '' });
    expect(claims).toMatchObject({
      sub: CONSUMER_UUID,
      aud: ACCOUNT,
      client_id: BOT_CLIENT_ID,
      gty: 'client_credentials',
      scope: 'read write',
    });
    const checked = await sentinel.checkBearer(`Bearer ${body.access_token as string}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID });
    expect(checked.ok).toBe(true);
  });

  it('emits token.exchanged with the issuer, client and consumer, never a token', async () => {
    const events: Record<string, unknown>[] = [];
    const sentinel = sentinelWith({ onEvent: (event) => events.push(event as never) });
    const response = await bearer(sentinel, await brandJWT(key));
    expect(response.status).toBe(200);
    const event = events.find((candidate) => candidate.type === 'token.exchanged');
    expect(event).toMatchObject({
      grantType: JWT_BEARER,
      issuer: BRAND_ISSUER,
      clientId: BOT_CLIENT_ID,
      consumerId: CONSUMER_UUID,
      subject: CONSUMER_UUID,
    });
    expect(JSON.stringify(events)).not.toMatch(/eyJ/);
  });

  it('accepts aud = the exchanging client_id, the token endpoint, and a configured audience only when configured', async () => {
    const sentinel = sentinelWith();
    expect((await bearer(sentinel, await brandJWT(key, { aud: BOT_CLIENT_ID }))).status).toBe(200);
    expect((await bearer(sentinel, await brandJWT(key, { aud: `${ACCOUNT_ISSUER}/token` }))).status).toBe(200);
    const configured = makeSentinel(
      exchangeOptions(key, {
        trustedIssuers: [
          { accountId: ACCOUNT, issuer: BRAND_ISSUER, jwks: { keys: [key.publicJwk as never] }, audience: 'messaging-platform' },
        ],
      }),
    );
    expect((await bearer(configured, await brandJWT(key, { aud: ['web', 'messaging-platform'] }))).status).toBe(200);
    await expectRefused(await bearer(configured, await brandJWT(key)), 'invalid_grant', /another audience/);
    // A configured audience is the only one: the client id and the token endpoint no longer stand in for it.
    await expectRefused(await bearer(configured, await brandJWT(key, { aud: BOT_CLIENT_ID })), 'invalid_grant', /another audience/);
    await expectRefused(
      await bearer(configured, await brandJWT(key, { aud: `${ACCOUNT_ISSUER}/token` })),
      'invalid_grant',
      /another audience/,
    );
  });

  // The signature is checked with node:crypto per algorithm of the allow-list: each one a brand may sign with works,
  // and a key of another type never verifies a JWT that names an algorithm it does not fit.
  it.each(['ES384', 'ES512', 'EdDSA', 'RS256', 'PS256', 'PS512'])('accepts a brand JWT signed with %s', async (alg) => {
    const pair = await generateKeyPair(alg, { extractable: true });
    const brand: BrandKey = {
      privateKey: pair.privateKey as CryptoKey,
      publicJwk: { ...(await exportJWK(pair.publicKey)), kid: `k-${alg}`, alg, use: 'sig' },
    };
    const now = Math.floor(Date.now() / 1000);
    const jwt = await new SignJWT({ iss: BRAND_ISSUER, sub: CONSUMER_UUID, aud: ACCOUNT_ISSUER, iat: now, exp: now + 60 })
      .setProtectedHeader({ alg, kid: `k-${alg}` })
      .sign(brand.privateKey);
    const response = await bearer(sentinelWith({}, brand), jwt);
    expect(response.status, response.body).toBe(200);
    const claimed = { ...brand.publicJwk, alg: alg === 'PS256' ? 'ES256' : alg };
    if (alg === 'PS256') {
      // the same key registered for another algorithm: refused, the registration's alg decides
      const refused = await bearer(sentinelWith({}, { ...brand, publicJwk: claimed }), jwt);
      expect(refused.status).toBe(400);
    }
  });

  it.each([
    ['issuer', { issuer: 'https://id.brand.example\u0085x' }],
    ['audience', { audience: 'messaging\u001b[31mplatform' }],
    ['consumerIdClaim', { consumerIdClaim: 'participant\nid' }],
  ])('refuses a trusted issuer whose %s holds a control character, naming the field', (name, field) => {
    const entry = { accountId: ACCOUNT, issuer: BRAND_ISSUER, jwks: { keys: [key.publicJwk as never] }, ...field };
    expect(() => makeSentinel(exchangeOptions(key, { trustedIssuers: [entry] }))).toThrow(
      new RegExp(`trustedIssuers\\[0\\]\\.${name}.*must not contain control characters`),
    );
  });

  it('reads the consumer from consumerIdClaim', async () => {
    const sentinel = sentinelWith({
      trustedIssuers: [
        { accountId: ACCOUNT, issuer: BRAND_ISSUER, jwks: { keys: [key.publicJwk as never] }, consumerIdClaim: 'participant' },
      ],
    });
    const response = await bearer(sentinel, await brandJWT(key, { sub: 'user@brand', participant: CONSUMER_HEX }));
    expect(response.status, response.body).toBe(200);
    expect(decodeJwt(jsonOf(response).access_token as string).sub).toBe(CONSUMER_HEX);
  });

  it('narrows the scope on request and echoes it', async () => {
    const response = await bearer(sentinelWith(), await brandJWT(key), { scope: 'read' });
    expect(jsonOf(response)).toMatchObject({ scope: 'read' });
    expect(decodeJwt(jsonOf(response).access_token as string).scope).toBe('read');
  });

  it('issues a token for the narrowing `audience` only, not for every `resource` (both grants)', async () => {
    const [a, b] = ['https://api-a.example.com/', 'https://api-b.example.com/'];
    const base = exchangeOptions(key);
    const apps = [...(base.apps ?? []).filter((app) => app.clientId !== BOT_CLIENT_ID), botApp({ resources: [a, b] })];
    const sentinel = makeSentinel({ ...base, apps });
    const grants: [string, Record<string, string>][] = [
      ['assertion', { grant_type: JWT_BEARER }],
      ['subject_token', { grant_type: TOKEN_EXCHANGE, subject_token_type: TYPE.jwt }],
    ];
    for (const [jwtParam, grant] of grants) {
      const form = new URLSearchParams({ ...grant, [jwtParam]: await brandJWT(key), ...BOT });
      form.append('resource', a);
      form.append('resource', b);
      const both = await postForm(sentinel, TOKEN_PATH, form.toString());
      expect(decodeJwt(jsonOf(both).access_token as string).aud).toEqual([a, b]);
      form.set(jwtParam, await brandJWT(key));
      form.append('audience', a);
      const narrowed = await postForm(sentinel, TOKEN_PATH, form.toString());
      expect(narrowed.status, narrowed.body).toBe(200);
      // RFC 8693 §2.1: `audience` narrows what `resource` allows; the token is valid at A only.
      expect(decodeJwt(jsonOf(narrowed).access_token as string).aud).toBe(a);
    }
  });

  describe('refusals (400, nothing issued, the token never echoed)', () => {
    it('refuses an issuer the account does not trust', async () => {
      const jwt = await brandJWT(key, { iss: 'https://id.other-brand.example' });
      await expectRefused(await bearer(sentinelWith(), jwt), 'invalid_grant', /issuer .* not trusted/, jwt);
    });

    it('refuses an issuer trusted by another account only', async () => {
      const sentinel = sentinelWith({
        trustedIssuers: [{ accountId: OTHER_ACCOUNT, issuer: BRAND_ISSUER, jwks: { keys: [key.publicJwk as never] } }],
      });
      await expectRefused(await bearer(sentinel, await brandJWT(key)), 'invalid_grant', /not trusted/);
    });

    it("refuses an issuer that a registry lists for another account (the registry's answer is filtered)", async () => {
      const bot = { ...(exchangeOptions(key).apps ?? []).find((app) => app.clientId === BOT_CLIENT_ID) } as Record<string, unknown>;
      const { clientSecret, ...rest } = bot;
      const registry = Object.assign(
        new MemoryAppStore([
          { ...rest, clientSecretHash: hashClientSecret(String(clientSecret)), tokenEndpointAuthMethod: 'client_secret_post' } as never,
        ]),
        {
          // A registry that answers too much: every account's issuers.
          findTrustedIssuers: () => [{ accountId: OTHER_ACCOUNT, issuer: BRAND_ISSUER, jwks: { keys: [key.publicJwk as never] } }],
        },
      );
      const sentinel = makeSentinel({ apps: [], appStore: registry, trustedIssuers: [] });
      await expectRefused(await bearer(sentinel, await brandJWT(key)), 'invalid_grant', /not trusted/);
    });

    it("reads an issuer the trustedIssuers option names from the option alone, never the registry's entry", async () => {
      // docs/guides/postgres-registry.md: removing or re-keying such an issuer in the registry changes nothing.
      const bot = { ...(exchangeOptions(key).apps ?? []).find((app) => app.clientId === BOT_CLIENT_ID) } as Record<string, unknown>;
      const { clientSecret, ...rest } = bot;
      const registryKey = await brandKey();
      const registry = Object.assign(
        new MemoryAppStore([
          { ...rest, clientSecretHash: hashClientSecret(String(clientSecret)), tokenEndpointAuthMethod: 'client_secret_post' } as never,
        ]),
        { findTrustedIssuers: () => [{ accountId: ACCOUNT, issuer: BRAND_ISSUER, jwks: { keys: [registryKey.publicJwk as never] } }] },
      );
      const sentinel = makeSentinel({
        apps: [],
        appStore: registry,
        trustedIssuers: [{ accountId: ACCOUNT, issuer: BRAND_ISSUER, jwks: { keys: [key.publicJwk as never] } }],
      });
      expect((await bearer(sentinel, await brandJWT(key))).status).toBe(200);
      await expectRefused(await bearer(sentinel, await brandJWT(registryKey)), 'invalid_grant', /not signed by a key/);
    });

    it('refuses a JWT signed by a key the issuer did not register', async () => {
      const stranger = await brandKey(key.publicJwk.kid as string);
      await expectRefused(
        await bearer(sentinelWith(), await brandJWT(stranger)),
        'invalid_grant',
        /not signed by a key of its trusted issuer/,
      );
    });

    it('refuses a symmetric (HS256) signature', async () => {
      const secret = new TextEncoder().encode('a-shared-secret-that-is-long-enough-for-hs256');
      const now = Math.floor(Date.now() / 1000);
      const jwt = await new SignJWT({ iss: BRAND_ISSUER, sub: CONSUMER_UUID, aud: ACCOUNT_ISSUER, iat: now, exp: now + 60 })
        .setProtectedHeader({ alg: 'HS256', kid: key.publicJwk.kid as string })
        .sign(secret);
      await expectRefused(await bearer(sentinelWith(), jwt), 'invalid_grant', /asymmetric algorithm/);
    });

    it('ignores jku, x5u and jwk headers: a key the JWT brings along verifies nothing', async () => {
      const attacker = await generateKeyPair('ES256', { extractable: true });
      const embedded = { ...(await exportJWK(attacker.publicKey)), kid: key.publicJwk.kid as string };
      const now = Math.floor(Date.now() / 1000);
      const jwt = await new SignJWT({ iss: BRAND_ISSUER, sub: CONSUMER_UUID, aud: ACCOUNT_ISSUER, iat: now, exp: now + 60 })
        .setProtectedHeader({
          alg: 'ES256',
          kid: embedded.kid,
          jwk: embedded,
          jku: 'https://attacker.example/jwks',
          x5u: 'https://attacker.example/x5u',
        })
        .sign(attacker.privateKey);
      await expectRefused(await bearer(sentinelWith(), jwt), 'invalid_grant', /not signed by a key of its trusted issuer/);
    });

    // The JWT is split once and its parts decoded with Buffer (src/lib/compact-jwt.ts): as strict as jose's
    // decoders were, and the refusal names which part failed.
    it('refuses an assertion that is not a compact JWS with a JSON object payload', async () => {
      const good = await brandJWT(key);
      const [header, payload, signature] = good.split('.') as [string, string, string];
      const encode = (value: string | Buffer) => Buffer.from(value).toString('base64url');
      for (const jwt of [
        'not-a-jwt',
        `${header}.${payload}`,
        `${header}.${payload}.${signature}.x.y`,
        `${header}..${signature}`,
        `${header}.${payload}=.${signature}`,
        // '{ }' and one character more: 4n + 1 characters are not base64, though a lenient decoder drops the last.
        `${header}.eyB9A.${signature}`,
        `${header}.${payload.slice(0, -1)}*.${signature}`,
        `${header}.${encode('[1,2]')}.${signature}`,
        `${header}.${encode('{"iss":')}.${signature}`,
        // Not UTF-8 inside a JSON string: a lenient decoder would read it as U+FFFD and go on.
        `${header}.${encode(Buffer.concat([Buffer.from('{"iss":"'), Buffer.from([0xff]), Buffer.from('"}')]))}.${signature}`,
      ]) {
        await expectRefused(await bearer(sentinelWith(), jwt), 'invalid_grant', /is not a JWT/);
      }
    });

    it('refuses a JWT whose header is not a JSON object', async () => {
      const [, payload, signature] = (await brandJWT(key)).split('.') as [string, string, string];
      for (const header of ['', Buffer.from('"ES256"').toString('base64url'), 'e30*']) {
        await expectRefused(await bearer(sentinelWith(), `${header}.${payload}.${signature}`), 'invalid_grant', /assertion is invalid/);
      }
    });

    it('refuses a JWT whose signature was altered', async () => {
      const sentinel = sentinelWith();
      const jwt = await brandJWT(key);
      const flipped = `${jwt.slice(0, -2)}${jwt.at(-2) === 'A' ? 'B' : 'A'}${jwt.at(-1)}`;
      await expectRefused(await bearer(sentinel, flipped), 'invalid_grant', /not signed by a key of its trusted issuer/, flipped);
      expect((await bearer(sentinel, jwt)).status).toBe(200);
    });

    // Node's base64url decoder skips characters outside the alphabet and padding: without a check of its own, a
    // signature part with anything added still decoded to the signature that verifies (RFC 7515 §2, §7.1).
    it('refuses a JWT whose signature part is not base64url, though what decodes from it verifies', async () => {
      const sentinel = sentinelWith();
      const jwt = await brandJWT(key);
      for (const altered of [`${jwt}!!`, `${jwt}==`, `${jwt.slice(0, -4)}+${jwt.slice(-4)}`, `${jwt.slice(0, -4)}\n${jwt.slice(-4)}`]) {
        await expectRefused(await bearer(sentinel, altered), 'invalid_grant', /the assertion is not a JWT/);
        await expectRefused(await exchange(sentinel, altered), 'invalid_request', /subject_token is not a JWT/);
      }
      // An unsecured JWT (RFC 7519 §6) has an empty signature part: refused for its algorithm, by name.
      const [header, payload] = jwt.split('.') as [string, string];
      const none = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${payload}.`;
      await expectRefused(await bearer(sentinel, none), 'invalid_grant', /must use an asymmetric algorithm/);
      await expectRefused(await bearer(sentinel, `${header}.${payload}.`), 'invalid_grant', /not signed by a key of its trusted issuer/);
      expect((await bearer(sentinel, jwt)).status).toBe(200);
      // An ES384 signature is 128 characters, a multiple of four: one more is a length base64 never has, which Buffer
      // drops, so the signature decoded is the issuer's.
      const es384 = await generateKeyPair('ES384', { extractable: true });
      const es384Brand: BrandKey = {
        privateKey: es384.privateKey as CryptoKey,
        publicJwk: { ...(await exportJWK(es384.publicKey)), kid: 'k-es384', alg: 'ES384', use: 'sig' },
      };
      const longer = await brandJWT(es384Brand, {}, { alg: 'ES384' });
      const es384Sentinel = sentinelWith({}, es384Brand);
      await expectRefused(await bearer(es384Sentinel, `${longer}A`), 'invalid_grant', /the assertion is not a JWT/);
      expect((await bearer(es384Sentinel, longer)).status).toBe(200);
    });

    // An ES256 signature is 64 bytes in 86 characters: the last carries four bits that no byte uses, which RFC 4648
    // §3.5 asks to be zero and Node's decoder ignores; with one of them set, the signature decoded is the issuer's.
    it('refuses a JWT whose signature part sets the unused bits of its last character', async () => {
      const sentinel = sentinelWith();
      const jwt = await brandJWT(key);
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const signature = jwt.slice(jwt.lastIndexOf('.') + 1);
      expect(signature).toHaveLength(86);
      const altered = `${jwt.slice(0, -1)}${alphabet[alphabet.indexOf(jwt.slice(-1)) | 1]}`;
      expect(altered).not.toBe(jwt);
      expect(Buffer.from(altered.slice(altered.lastIndexOf('.') + 1), 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(true);
      await expectRefused(await bearer(sentinel, altered), 'invalid_grant', /the assertion is not a JWT/);
      await expectRefused(await exchange(sentinel, altered), 'invalid_request', /subject_token is not a JWT/);
      expect((await bearer(sentinel, jwt)).status).toBe(200);
    });

    // ECDSA and EdDSA checks run on the thread pool by default, RSA ones on the main thread; 'sync' keeps them all
    // there. Either way the same signature is accepted and the altered one refused.
    it.each(['threadpool', 'sync'] as const)('decides the same with verification: %s', async (verification) => {
      const rsa = await generateKeyPair('RS256', { extractable: true });
      const rsaBrand: BrandKey = {
        privateKey: rsa.privateKey as CryptoKey,
        publicJwk: { ...(await exportJWK(rsa.publicKey)), kid: 'k-rs256', alg: 'RS256', use: 'sig' },
      };
      for (const [brand, alg] of [
        [key, 'ES256'],
        [rsaBrand, 'RS256'],
      ] as const) {
        const sentinel = sentinelWith({ verification }, brand);
        const jwt = await brandJWT(brand, {}, { alg });
        const flipped = `${jwt.slice(0, -2)}${jwt.at(-2) === 'A' ? 'B' : 'A'}${jwt.at(-1)}`;
        await expectRefused(await bearer(sentinel, flipped), 'invalid_grant', /not signed by a key of its trusted issuer/, flipped);
        expect((await bearer(sentinel, jwt)).status, alg).toBe(200);
      }
    });

    it('refuses critical header extensions', async () => {
      const jwt = await brandJWT(key, {}, { crit: ['exp'] }).catch(async () => {
        const now = Math.floor(Date.now() / 1000);
        return new SignJWT({ iss: BRAND_ISSUER, sub: CONSUMER_UUID, aud: ACCOUNT_ISSUER, iat: now, exp: now + 60 })
          .setProtectedHeader({ alg: 'ES256', kid: key.publicJwk.kid as string, crit: ['urn:x'], 'urn:x': 1 })
          .sign(key.privateKey, { crit: { 'urn:x': true } });
      });
      await expectRefused(await bearer(sentinelWith(), jwt), 'invalid_grant', /critical header/);
    });

    it("refuses a JWT typed as another kind of token (the brand's access or logout token), with both grants", async () => {
      const sentinel = sentinelWith();
      for (const typ of ['at+jwt', 'application/at+JWT', 'logout+jwt', 'secevent+jwt', 'dpop+jwt']) {
        await expectRefused(await bearer(sentinel, await brandJWT(key, {}, { typ })), 'invalid_grant', /another kind of JWT/);
        await expectRefused(await exchange(sentinel, await brandJWT(key, {}, { typ })), 'invalid_request', /another kind of JWT/);
      }
      // A plain JWT's type, in any spelling of its media type, and no type at all are what issuers put on ID tokens.
      for (const typ of ['JWT', 'jwt', 'application/jwt', undefined]) {
        const response = await bearer(sentinel, await brandJWT(key, {}, typ === undefined ? {} : { typ }));
        expect(response.status, `${typ} ${response.body}`).toBe(200);
      }
    });

    it('refuses an aud that names neither this service nor the client', async () => {
      await expectRefused(
        await bearer(sentinelWith(), await brandJWT(key, { aud: 'https://someone-else.example' })),
        'invalid_grant',
        /another audience/,
      );
    });

    it('refuses a JWT without exp', async () => {
      await expectRefused(await bearer(sentinelWith(), await brandJWT(key, { exp: null })), 'invalid_grant', /no exp/);
    });

    it('refuses an expired JWT', async () => {
      const now = Math.floor(Date.now() / 1000);
      await expectRefused(await bearer(sentinelWith(), await brandJWT(key, { iat: now - 120, exp: now - 60 })), 'invalid_grant', /expired/);
    });

    it('refuses a JWT not valid before a time still to come (nbf), naming the claim', async () => {
      const now = Math.floor(Date.now() / 1000);
      await expectRefused(await bearer(sentinelWith(), await brandJWT(key, { nbf: now + 600 })), 'invalid_grant', /not valid yet \(nbf\)/);
    });

    it('names the time claim that is not a number (a brand signing ISO dates or strings)', async () => {
      const sentinel = sentinelWith();
      const now = Math.floor(Date.now() / 1000);
      for (const claim of ['exp', 'iat', 'nbf'] as const) {
        const jwt = await brandJWT(key, { [claim]: String(now) });
        await expectRefused(
          await bearer(sentinel, jwt),
          'invalid_grant',
          new RegExp(`^the ${claim} claim of the assertion is not a number$`),
          jwt,
        );
      }
      const jwt = await brandJWT(key, { exp: new Date((now + 60) * 1000).toISOString() });
      await expectRefused(await exchange(sentinel, jwt), 'invalid_request', /^the exp claim of subject_token is not a number$/, jwt);
    });

    it('refuses an iat in the future', async () => {
      const now = Math.floor(Date.now() / 1000);
      await expectRefused(
        await bearer(sentinelWith(), await brandJWT(key, { iat: now + 120, exp: now + 180 })),
        'invalid_grant',
        /in the future/,
      );
    });

    it('refuses a lifetime over an hour (with and without iat)', async () => {
      const now = Math.floor(Date.now() / 1000);
      await expectRefused(
        await bearer(sentinelWith(), await brandJWT(key, { iat: now - 10, exp: now + 3600 })),
        'invalid_grant',
        /longer than 3600/,
      );
      await expectRefused(
        await bearer(sentinelWith(), await brandJWT(key, { iat: null, exp: now + 3700 })),
        'invalid_grant',
        /longer than 3600/,
      );
    });

    it('refuses a replayed jti, and stores nothing but its marker', async () => {
      const store = recordingStore(new MemoryStore());
      const sentinel = sentinelWith({ store });
      const jwt = await brandJWT(key);
      expect((await bearer(sentinel, jwt)).status).toBe(200);
      // Beside the marker, the first marker of a store publishes its replay epoch (src/stores/replay-epoch.ts).
      expect(store.writes.map((write) => `${write.op} ${write.key.split(':')[0]}`)).toEqual(['increment brand-jti', 'swap replay-epoch']);
      await expectRefused(await bearer(sentinel, jwt), 'invalid_grant', /already been used/, jwt);
    });

    it('writes nothing for a refused request: the same JWT still works after a refusal', async () => {
      const store = recordingStore(new MemoryStore());
      const sentinel = sentinelWith({ store });
      const jwt = await brandJWT(key);
      await expectRefused(await bearer(sentinel, jwt, { scope: 'admin' }), 'invalid_scope', /admin/);
      expect(store.writes).toEqual([]);
      expect((await bearer(sentinel, jwt)).status).toBe(200);
    });

    it('a signer that fails (500) leaves the JWT unspent: the retry with it gets a token, for both grants', async () => {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      let failures = 0;
      const signer = {
        kid: 'hsm-1',
        alg: 'ES256' as const,
        publicJwk: publicKey.export({ format: 'jwk' }) as JWK,
        async sign(data: Uint8Array): Promise<Uint8Array> {
          if (failures > 0) {
            failures -= 1;
            throw new Error('HSM session lost');
          }
          return nodeSign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
        },
      };
      const sentinel = sentinelWith({ keys: [{ signer }], onError: () => {} });
      for (const present of [bearer, exchange]) {
        const jwt = await brandJWT(key);
        failures = 1;
        const failed = await present(sentinel, jwt);
        expect(failed.status).toBe(500);
        expect(jsonOf(failed)).toEqual({ error: 'server_error', error_description: expect.any(String) });
        expect((await present(sentinel, jwt)).status).toBe(200);
        // Still single use once a token was issued for it.
        await expectRefused(
          await present(sentinel, jwt),
          present === bearer ? 'invalid_grant' : 'invalid_request',
          /already been used/,
          jwt,
        );
      }
    });

    it('refuses a JWT without the consumer claim, and a consumer id that is not a participant id', async () => {
      await expectRefused(await bearer(sentinelWith(), await brandJWT(key, { sub: null })), 'invalid_grant', /no consumer id/);
      await expectRefused(
        await bearer(sentinelWith(), await brandJWT(key, { sub: 'alice@brand.example' })),
        'invalid_grant',
        /not a valid participant id/,
      );
    });

    it('refuses a consumer claim that is not a string, without asking the consumerId validator', async () => {
      const consumerId = vi.fn(() => true);
      const sentinel = sentinelWith({ consumerId });
      for (const sub of [12345, [CONSUMER_UUID], { id: CONSUMER_UUID }, true]) {
        await expectRefused(
          await bearer(sentinel, await brandJWT(key, { sub })),
          'invalid_grant',
          /sub claim of the assertion is not a string/,
        );
        await expectRefused(
          await exchange(sentinel, await brandJWT(key, { sub })),
          'invalid_request',
          /sub claim of subject_token is not a string/,
        );
      }
      expect(consumerId).not.toHaveBeenCalled();
    });

    it('asks the consumerId validator when there is one', async () => {
      const consumerId = vi.fn(() => false);
      await expectRefused(await bearer(sentinelWith({ consumerId }), await brandJWT(key)), 'invalid_grant', /not a valid participant id/);
      expect(consumerId).toHaveBeenCalledWith(CONSUMER_UUID, { accountId: ACCOUNT, clientId: BOT_CLIENT_ID });
    });

    it('is a server_error, nothing issued and the JWT unspent, when the validator answers other than a boolean', async () => {
      const onError = vi.fn();
      const answer = vi.fn((): unknown => 'false');
      const sentinel = sentinelWith({ consumerId: answer as never, onError });
      const assertion = await brandJWT(key);
      const response = await bearer(sentinel, assertion);
      expect(response.status).toBe(500);
      expect(jsonOf(response).error).toBe('server_error');
      expect(jsonOf(response).access_token).toBeUndefined();
      expect(String(onError.mock.calls[0]?.[0])).toContain('consumerId() must return true or false');
      // Fixed, the host's hook answers: the same JWT still works (the refused request did not spend it).
      answer.mockReturnValue(true);
      expect((await bearer(sentinel, assertion)).status).toBe(200);
    });

    it('refuses an app not registered for the grant (unauthorized_client)', async () => {
      const response = await postForm(
        sentinelWith(),
        TOKEN_PATH,
        new URLSearchParams({
          grant_type: JWT_BEARER,
          assertion: await brandJWT(key),
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
        }).toString(),
      );
      await expectRefused(response, 'unauthorized_client', /not registered/);
    });

    it('refuses a wider scope (invalid_scope) and another audience (invalid_target)', async () => {
      await expectRefused(await bearer(sentinelWith(), await brandJWT(key), { scope: 'read admin' }), 'invalid_scope', /admin/);
      await expectRefused(
        await bearer(sentinelWith(), await brandJWT(key), { audience: 'https://api.other.example' }),
        'invalid_target',
        /audience/,
      );
      await expectRefused(
        await bearer(sentinelWith(), await brandJWT(key), { resource: 'https://api.other.example' }),
        'invalid_target',
        /resource/,
      );
      // One foreign audience among allowed ones is refused too: each asked audience must be one the token may have.
      const assertion = await brandJWT(key);
      lastSent = assertion;
      const mixed = new URLSearchParams({ grant_type: JWT_BEARER, assertion, ...BOT });
      mixed.append('audience', ACCOUNT);
      mixed.append('audience', 'https://api.other.example');
      await expectRefused(await postForm(sentinelWith(), TOKEN_PATH, mixed.toString()), 'invalid_target', /audience/);
    });

    it('refuses an RSA key under 2048 bits, and a key of another curve than the algorithm names', async () => {
      // Keys a fetched set may hold (a configured set with them is refused at startup).
      const small = generateKeyPairSync('rsa', { modulusLength: 1024 });
      // A P-384 key signing over SHA-256 makes a signature node:crypto verifies: ES256 names P-256 only.
      const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
      const keys = [
        { ...small.publicKey.export({ format: 'jwk' }), kid: 'rsa-1024' },
        { ...p384.publicKey.export({ format: 'jwk' }), kid: 'ec-384' },
      ];
      const server = createServer((_request, response) => {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ keys }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      try {
        const sentinel = sentinelWith({
          clientJwks: { allowPrivateAddresses: true },
          trustedIssuers: [{ accountId: ACCOUNT, issuer: BRAND_ISSUER, jwksUri: `http://127.0.0.1:${port}/jwks.json` }],
        });
        const smallJWT = nodeSignedJWT('RS256', 'rsa-1024', freshClaims(), (input) => nodeSign('sha256', input, small.privateKey));
        await expectRefused(await bearer(sentinel, smallJWT), 'invalid_grant', /not signed by a key of its trusted issuer/);
        const p384JWT = nodeSignedJWT('ES256', 'ec-384', freshClaims(), (input) =>
          nodeSign('sha256', input, { key: p384.privateKey, dsaEncoding: 'ieee-p1363' }),
        );
        await expectRefused(await bearer(sentinel, p384JWT), 'invalid_grant', /not signed by a key of its trusted issuer/);
      } finally {
        server.close();
      }
    });

    it('refuses a malformed jti: not a string, empty, or over 256 characters', async () => {
      const sentinel = sentinelWith();
      for (const jti of [42, '', 'j'.repeat(257)]) {
        await expectRefused(await bearer(sentinel, await brandJWT(key, { jti })), 'invalid_grant', /malformed jti/);
      }
      expect((await bearer(sentinel, await brandJWT(key, { jti: 'j'.repeat(256) }))).status).toBe(200);
    });

    it('spends a jti per issuer: two issuers of one account may each use the same one, once', async () => {
      const other = await brandKey();
      const OTHER_ISSUER = 'https://id.other-brand.example';
      const sentinel = makeSentinel(
        exchangeOptions(key, {
          trustedIssuers: [
            { accountId: ACCOUNT, issuer: BRAND_ISSUER, jwks: { keys: [key.publicJwk as never] } },
            { accountId: ACCOUNT, issuer: OTHER_ISSUER, jwks: { keys: [other.publicJwk as never] } },
          ],
        }),
      );
      expect((await bearer(sentinel, await brandJWT(key, { jti: 'shared' }))).status).toBe(200);
      expect((await bearer(sentinel, await brandJWT(other, { iss: OTHER_ISSUER, jti: 'shared' }))).status).toBe(200);
      await expectRefused(await bearer(sentinel, await brandJWT(other, { iss: OTHER_ISSUER, jti: 'shared' })), 'invalid_grant', /used/);
    });

    it('refuses a scope outside the RFC 6749 §3.3 characters without echoing it (brand grants, client credentials)', async () => {
      // RFC 6749 §5.2: error_description holds %x20-21 / %x23-5B / %x5D-7E only; the client's text is none of that.
      const allowed = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
      const sentinel = sentinelWith();
      for (const scope of ['read\twrite', 'read "admin"', 'read a\\b', 'read é', 'read <x>\u0000']) {
        for (const response of [
          await bearer(sentinel, await brandJWT(key), { scope }),
          await exchange(sentinel, await brandJWT(key), { scope }),
          await postForm(sentinel, TOKEN_PATH, new URLSearchParams({ grant_type: 'client_credentials', scope, ...BOT }).toString()),
        ]) {
          await expectRefused(response, 'invalid_scope', /^scope must be space-separated scope tokens/);
          expect(String(jsonOf(response).error_description)).toMatch(allowed);
        }
      }
      // A well-formed token the app may not have is still named, on each path, without "the subject's" on a brand JWT.
      const wider = await exchange(sentinel, await brandJWT(key), { scope: 'read admin' });
      await expectRefused(wider, 'invalid_scope', /admin/);
      expect(String(jsonOf(wider).error_description)).not.toMatch(/subject/);
      const app = new URLSearchParams({ grant_type: 'client_credentials', scope: 'read admin', ...BOT }).toString();
      await expectRefused(await postForm(sentinel, TOKEN_PATH, app), 'invalid_scope', /admin/);
    });

    it('refuses a request without assertion', async () => {
      const response = await postForm(sentinelWith(), TOKEN_PATH, new URLSearchParams({ grant_type: JWT_BEARER, ...BOT }).toString());
      await expectRefused(response, 'invalid_request', /assertion is required/);
    });

    it('refuses without client authentication', async () => {
      const body = { grant_type: JWT_BEARER, assertion: await brandJWT(key), client_id: BOT_CLIENT_ID, client_secret: 'wrong-secret' };
      const response = await postForm(sentinelWith(), TOKEN_PATH, new URLSearchParams(body).toString());
      // RFC 6749 §5.2: 400 for credentials in the body (401 only after HTTP Basic).
      expect(response.status).toBe(400);
      expect(jsonOf(response).error).toBe('invalid_client');
    });
  });
});

describe('token exchange (RFC 8693) of a brand id_token or jwt', () => {
  it('answers per §2.2.1 with issued_token_type, for both subject token types', async () => {
    const sentinel = sentinelWith();
    for (const type of [TYPE.idToken, TYPE.jwt]) {
      const response = await exchange(sentinel, await brandJWT(key), { subject_token_type: type });
      expect(response.status, response.body).toBe(200);
      expect(response.headers['cache-control']).toBe('no-store');
      const body = jsonOf(response);
      // RFC 8693 §2.2.1: the scope the request did not name (the app's) is in the answer.
      expect(body).toMatchObject({ issued_token_type: TYPE.accessToken, token_type: 'Bearer', expires_in: 3600, scope: 'read write' });
      expect(decodeJwt(body.access_token as string)).toMatchObject({ sub: CONSUMER_UUID, client_id: BOT_CLIENT_ID, scope: 'read write' });
    }
  });

  it('refuses an invalid subject_token with invalid_request (§2.2.2), never echoing it', async () => {
    const jwt = await brandJWT(key, { aud: 'https://someone-else.example' });
    await expectRefused(await exchange(sentinelWith(), jwt), 'invalid_request', /subject_token is for another audience/, jwt);
  });

  it('refuses an unknown subject_token_type, a requested_token_type it cannot issue, and an actor_token with a brand JWT', async () => {
    const sentinel = sentinelWith();
    await expectRefused(
      await exchange(sentinel, await brandJWT(key), { subject_token_type: 'urn:ietf:params:oauth:token-type:saml2' }),
      'invalid_request',
      /subject_token_type/,
    );
    await expectRefused(
      await exchange(sentinel, await brandJWT(key), { requested_token_type: TYPE.idToken }),
      'invalid_request',
      /requested_token_type/,
    );
    await expectRefused(
      await exchange(sentinel, await brandJWT(key), { actor_token: 'x', actor_token_type: TYPE.accessToken }),
      'invalid_request',
      /actor_token is accepted only/,
    );
    await expectRefused(await exchange(sentinel, await brandJWT(key), { actor_token: 'x' }), 'invalid_request', /together/);
  });

  it('refuses a missing subject_token or subject_token_type', async () => {
    const sentinel = sentinelWith();
    const body = new URLSearchParams({ grant_type: TOKEN_EXCHANGE, subject_token_type: TYPE.jwt, ...BOT }).toString();
    await expectRefused(await postForm(sentinel, TOKEN_PATH, body), 'invalid_request', /subject_token is required/);
    const noType = new URLSearchParams({ grant_type: TOKEN_EXCHANGE, subject_token: await brandJWT(key), ...BOT }).toString();
    await expectRefused(await postForm(sentinel, TOKEN_PATH, noType), 'invalid_request', /subject_token_type is required/);
  });
});

describe('an issuer whose key set cannot be fetched', () => {
  it('is invalid_grant for that request, onError hears the cause, and every other grant keeps working', async () => {
    // A server that answers 500: the fetch fails, not the JWT.
    const server = createServer((_request, response) => {
      response.statusCode = 500;
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const onError = vi.fn();
      const sentinel = sentinelWith({
        clientJwks: { allowPrivateAddresses: true },
        trustedIssuers: [{ accountId: ACCOUNT, issuer: BRAND_ISSUER, jwksUri: `http://127.0.0.1:${port}/jwks.json` }],
        onError,
      });
      const response = await bearer(sentinel, await brandJWT(key));
      await expectRefused(response, 'invalid_grant', /key set is unavailable/);
      expect(onError).toHaveBeenCalledTimes(1);
      expect(onError.mock.calls[0]?.[0]).toMatchObject({ name: 'JwksFetchError' });
      expect(onError.mock.calls[0]?.[1]).toEqual({ route: 'token', accountId: ACCOUNT });
      // More JWTs during the fetcher's pause are refused alike, without another fetch to report: onError hears the
      // failure once, not once per request any client of the account can send.
      for (let round = 0; round < 5; round += 1) {
        await expectRefused(await bearer(sentinel, await brandJWT(key)), 'invalid_grant', /key set is unavailable/);
      }
      expect(onError).toHaveBeenCalledTimes(1);
      const v2 = await postForm(sentinel, appTokenPath(), 'grant_type=client_credentials', {
        headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET) },
      });
      expect(v2.status).toBe(200);
      const cc = await postForm(sentinel, TOKEN_PATH, new URLSearchParams({ grant_type: 'client_credentials', ...BOT }).toString());
      expect(cc.status).toBe(200);
    } finally {
      server.close();
    }
  });

  it('refuses a private address unless clientJwks.allowPrivateAddresses', async () => {
    const onError = vi.fn();
    const sentinel = sentinelWith({
      trustedIssuers: [{ accountId: ACCOUNT, issuer: BRAND_ISSUER, jwksUri: 'https://127.0.0.1/jwks.json' }],
      onError,
    });
    await expectRefused(await bearer(sentinel, await brandJWT(key)), 'invalid_grant', /private, loopback or link-local/);
  });
});
