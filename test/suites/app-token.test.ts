/**
 * Black-box suite of the v2 consumer-bound client credentials endpoint (platform-operations.md §4.1), the JWKS endpoint, and
 * the bearer guard of the token-retrieval API, through `sentinel.handle()`.
 */
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify, SignJWT, importJWK } from 'jose';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { generatePrivateJWK } from '../../src/index.js';
import {
  ACCOUNT,
  appTokenPath,
  basic,
  baseOptions,
  CC_ONLY_CLIENT_ID,
  CC_ONLY_SECRET,
  ccBody,
  CLIENT_ID,
  CLIENT_SECRET,
  CONSUMER_HEX,
  CONSUMER_UUID,
  ISSUER,
  OTHER_ACCOUNT,
  OTHER_CLIENT_ID,
  OTHER_SECRET,
  SIGNING_KEY,
} from '../helpers/fixtures.js';
import { HANDLE_HOST } from '../helpers/handle-host.js';
import type { Host } from '../helpers/host.js';
import { useMount } from '../helpers/mount.js';
import { expectError, expectNoStore } from '../helpers/oauth.js';

const FORM = 'application/x-www-form-urlencoded;charset=UTF-8';
const ACCOUNT_ISSUER = `${ISSUER}/sentinel/api/account/${ACCOUNT}`;
const brandPath = (accountId: string, consumerId: string): string => `/api/account/${accountId}/consumer/${consumerId}/brand/tokens`;

/** Runs the app-token suite against `host`. */
function appTokenSuite(host: Host): void {
  const mount = useMount(host);
  const post = (server: request.SuperTest<request.Test> | ReturnType<typeof request>, path = appTokenPath()) =>
    (server as ReturnType<typeof request>).post(path).set('content-type', FORM);

  describe('v2 app token: success', () => {
    it('issues a consumer-bound RFC 9068 JWT with the no-store headers and a string expires_in', async () => {
      const { server, url } = await mount();
      const response = await post(request(server)).send(ccBody());
      expect(response.status).toBe(200);
      expectNoStore(response);
      expect(Object.keys(response.body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
      expect(response.body.token_type).toBe('Bearer');
      expect(response.body.expires_in).toBe('3600');

      const jwks = createRemoteJWKSet(new URL(`${url}/sentinel/well-known/jwks`));
      const { payload, protectedHeader } = await jwtVerify(response.body.access_token, jwks, {
        issuer: ACCOUNT_ISSUER,
        audience: ACCOUNT,
        typ: 'at+jwt',
      });
      expect(protectedHeader.alg).toBe('ES256');
      expect(protectedHeader.kid).toBe(SIGNING_KEY.kid);
      expect(payload.sub).toBe(CONSUMER_UUID);
      expect(payload.client_id).toBe(CLIENT_ID);
      expect(payload.azp).toBe(CLIENT_ID);
      expect(payload.exp! - payload.iat!).toBe(3600);
      expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
      expect(payload.scope).toBeUndefined();
    });

    it('accepts a 64-hex consumer id and HTTP Basic client authentication', async () => {
      const { server } = await mount();
      const response = await post(request(server), appTokenPath(CONSUMER_HEX))
        .set('authorization', basic(CLIENT_ID, CLIENT_SECRET))
        .send('grant_type=client_credentials');
      expect(response.status).toBe(200);
      const payload = JSON.parse(Buffer.from(response.body.access_token.split('.')[1], 'base64url').toString());
      expect(payload.sub).toBe(CONSUMER_HEX);
    });

    it('accepts Content-Type without charset, and unknown parameters are ignored', async () => {
      const { server } = await mount();
      const response = await request(server)
        .post(`${appTokenPath()}&v=2.0&unknown=1`)
        .set('content-type', 'application/x-www-form-urlencoded')
        .send(`${ccBody()}&extra=ignored`);
      expect(response.status).toBe(200);
    });

    it('honours expiresIn number, the lifetime, audience, scope and a namespaced consumer claim', async () => {
      const options = baseOptions();
      const apps = options.apps!.map((app) => (app.clientId === CLIENT_ID ? { ...app, scope: 'delegated.token.read.external' } : app));
      const { server, sentinel } = await mount({
        apps,
        expiresIn: 'number',
        accessTokenTtl: 600,
        audience: 'https://api.example.com',
        consumerClaim: 'https://platform.example/consumer_id',
      });
      const response = await post(request(server)).send(ccBody());
      expect(response.status).toBe(200);
      expect(response.body.expires_in).toBe(600);
      const { payload } = await jwtVerify(response.body.access_token, createLocalJWKSet(sentinel.jwks()), {
        audience: 'https://api.example.com',
      });
      expect(payload.exp! - payload.iat!).toBe(600);
      expect(payload.scope).toBe('delegated.token.read.external');
      expect(payload['https://platform.example/consumer_id']).toBe(CONSUMER_UUID);
    });

    it.each([
      ['RS256', 'RS256'],
      ['EdDSA', 'EdDSA'],
    ] as const)('signs with a %s key and the token verifies with jose', async (alg, expected) => {
      const { server, url } = await mount({ keys: [generatePrivateJWK(alg)] });
      const response = await post(request(server)).send(ccBody());
      expect(response.status).toBe(200);
      expect(decodeProtectedHeader(response.body.access_token).alg).toBe(expected);
      const jwks = createRemoteJWKSet(new URL(`${url}/sentinel/well-known/jwks`));
      await expect(jwtVerify(response.body.access_token, jwks, { issuer: ACCOUNT_ISSUER })).resolves.toBeTruthy();
    });

    it('uses an async consumerId validator after client authentication', async () => {
      const validator = vi.fn(async (consumerId: string) => consumerId === 'consumer-42');
      const { server } = await mount({ consumerId: validator });
      expect((await post(request(server), appTokenPath('consumer-42')).send(ccBody())).status).toBe(200);
      const refused = await post(request(server), appTokenPath('consumer-43')).send(ccBody());
      expectError(refused, 400, 'invalid_request');
      const unauthenticated = await post(request(server), appTokenPath('consumer-42')).send(ccBody({ client_secret: 'wrong' }));
      expectError(unauthenticated, 400, 'invalid_client');
      expect(validator).toHaveBeenCalledTimes(2);
    });
  });

  describe('v2 app token: errors', () => {
    it.each([
      ['missing state', appTokenPath(null)],
      ['malformed state', appTokenPath('not-a-consumer')],
      ['upper-case UUID state', appTokenPath(CONSUMER_UUID.toUpperCase())],
      ['state given twice', `${appTokenPath()}&state=${CONSUMER_HEX}`],
    ])('%s → 400 invalid_request', async (_name, path) => {
      const { server } = await mount();
      expectError(await post(request(server), path).send(ccBody()), 400, 'invalid_request');
    });

    it('grant_type missing → invalid_request; another grant → unsupported_grant_type', async () => {
      const { server } = await mount();
      expectError(await post(request(server)).send(`client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}`), 400, 'invalid_request');
      expectError(await post(request(server)).send(ccBody({ grant_type: 'password' })), 400, 'unsupported_grant_type');
      expectError(await post(request(server)).send(ccBody({ grant_type: 'authorization_code' })), 400, 'unsupported_grant_type');
    });

    it.each([
      ['an unknown client', ccBody({ client_id: 'ffffffff-ffff-4fff-8fff-ffffffffffff' })],
      ['a wrong secret', ccBody({ client_secret: `${CLIENT_SECRET}x` })],
      ['an app of another account', ccBody({ client_id: OTHER_CLIENT_ID, client_secret: OTHER_SECRET })],
      ['no credentials', 'grant_type=client_credentials'],
      ['a client id without secret', `grant_type=client_credentials&client_id=${CLIENT_ID}`],
    ])('%s → 400 invalid_client, and the description never echoes the secret', async (_name, body) => {
      const { server } = await mount();
      const response = await post(request(server)).send(body);
      expectError(response, 400, 'invalid_client');
      expect(response.text).not.toContain(CLIENT_SECRET);
      expect(response.text).not.toContain(OTHER_SECRET);
    });

    it('a wrong secret over HTTP Basic → 401 invalid_client with WWW-Authenticate: Basic', async () => {
      const { server } = await mount();
      const response = await post(request(server)).set('authorization', basic(CLIENT_ID, 'wrong')).send('grant_type=client_credentials');
      expectError(response, 401, 'invalid_client');
      expect(response.headers['www-authenticate']).toMatch(/^Basic realm="sentinel"/);
    });

    it('Basic and body credentials together → invalid_request', async () => {
      const { server } = await mount();
      const response = await post(request(server)).set('authorization', basic(CLIENT_ID, CLIENT_SECRET)).send(ccBody());
      expectError(response, 400, 'invalid_request');
    });

    it('an app not registered for client_credentials → unauthorized_client', async () => {
      const options = baseOptions();
      const apps = [
        ...options.apps!,
        {
          accountId: ACCOUNT,
          clientId: 'code-only',
          clientSecret: 'code-only-secret',
          redirectUris: ['https://c.example/cb'],
          grantTypes: ['authorization_code' as const],
        },
      ];
      const { server } = await mount({ apps });
      const response = await post(request(server)).send(ccBody({ client_id: 'code-only', client_secret: 'code-only-secret' }));
      expectError(response, 400, 'unauthorized_client');
    });

    it.each(['grant_type', 'client_id', 'client_secret'])('%s given twice → invalid_request', async (name) => {
      const { server } = await mount();
      const body = `${ccBody()}&${name}=${new URLSearchParams(ccBody()).get(name)}`;
      expectError(await post(request(server)).send(body), 400, 'invalid_request');
    });

    it('client_secret in the URL → invalid_request that says why, without echoing it', async () => {
      const { server } = await mount();
      const response = await post(request(server), `${appTokenPath()}&client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}`).send(
        'grant_type=client_credentials',
      );
      expectError(response, 400, 'invalid_request');
      expect(response.body.error_description).toMatch(/URL/);
      expect(response.text).not.toContain(CLIENT_SECRET);
    });

    it.each([
      ['application/json', JSON.stringify({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET })],
      ['text/plain', ccBody()],
      ['application/x-www-form-urlencoded;charset=ISO-8859-1', ccBody()],
      ['multipart/form-data; boundary=x', ccBody()],
    ])('Content-Type %s → invalid_request', async (type, body) => {
      const { server } = await mount();
      const response = await request(server).post(appTokenPath()).set('content-type', type).send(body);
      expectError(response, 400, 'invalid_request');
    });

    it('a body over 16 KiB → 413', async () => {
      const { server } = await mount();
      const response = await post(request(server)).send(`${ccBody()}&padding=${'a'.repeat(17_000)}`);
      expect(response.status).toBe(413);
      expect(response.body.error).toBe('invalid_request');
    });

    it('other methods → 405 with Allow: POST', async () => {
      const { server } = await mount();
      for (const method of ['get', 'put', 'delete'] as const) {
        const response = await request(server)[method](appTokenPath());
        expect(response.status).toBe(405);
        expect(response.headers.allow).toBe('POST');
      }
    });

    it('a failing consumer validator → 500 server_error without detail, cause to onError, nothing issued', async () => {
      const onError = vi.fn();
      const onEvent = vi.fn();
      const { server } = await mount({
        onError,
        onEvent,
        consumerId: async () => {
          throw new Error('consumer directory down: secret-detail');
        },
      });
      const response = await post(request(server), appTokenPath('c-1')).send(ccBody());
      expect(response.status).toBe(500);
      expectNoStore(response);
      expect(response.body.error).toBe('server_error');
      expect(response.text).not.toContain('secret-detail');
      expect(onError).toHaveBeenCalledTimes(1);
      expect(String(onError.mock.calls[0]![0])).toContain('consumer directory down');
      expect(onEvent.mock.calls.some(([event]) => event.type === 'token.issued')).toBe(false);
    });

    it.each([
      ['the string "false"', 'false'],
      ['an object', { allowed: false }],
      ['undefined (a forgotten return)', undefined],
    ])(
      'a consumer validator answering %s, not a boolean → 500 server_error, onError names the hook, nothing issued',
      async (_name, answer) => {
        const onError = vi.fn();
        const onEvent = vi.fn();
        const { server } = await mount({ onError, onEvent, consumerId: (async () => answer) as never });
        const response = await post(request(server), appTokenPath('c-1')).send(ccBody());
        expect(response.status).toBe(500);
        expect(response.body.error).toBe('server_error');
        expect(response.body.access_token).toBeUndefined();
        expect(onError).toHaveBeenCalledTimes(1);
        expect(String(onError.mock.calls[0]![0])).toContain('consumerId() must return true or false');
        expect(onEvent.mock.calls.some(([event]) => event.type === 'token.issued')).toBe(false);
      },
    );

    it('a throwing onEvent hook → 500 server_error and no token in the body', async () => {
      const onError = vi.fn();
      const { server } = await mount({
        onError,
        onEvent: () => {
          throw new Error('audit sink down');
        },
      });
      const response = await post(request(server)).send(ccBody());
      expect(response.status).toBe(500);
      expect(response.body.access_token).toBeUndefined();
      expect(onError).toHaveBeenCalled();
    });

    it('tokens of the other account carry its own issuer and audience', async () => {
      const { server } = await mount();
      const response = await post(request(server), appTokenPath(CONSUMER_UUID, OTHER_ACCOUNT)).send(
        ccBody({ client_id: OTHER_CLIENT_ID, client_secret: OTHER_SECRET }),
      );
      expect(response.status).toBe(200);
      const payload = JSON.parse(Buffer.from(response.body.access_token.split('.')[1], 'base64url').toString());
      expect(payload.aud).toBe(OTHER_ACCOUNT);
      expect(payload.iss).toBe(`${ISSUER}/sentinel/api/account/${OTHER_ACCOUNT}`);
    });
  });

  describe('JWKS', () => {
    it('publishes public keys only, cacheable, every configured key (rotation)', async () => {
      const next = generatePrivateJWK('ES256');
      const { server } = await mount({ keys: [next, SIGNING_KEY] });
      const response = await request(server).get('/sentinel/well-known/jwks');
      expect(response.status).toBe(200);
      expect(response.headers['cache-control']).toBe('public, max-age=300');
      expect(response.body.keys.map((key: { kid: string }) => key.kid)).toEqual([next.kid, SIGNING_KEY.kid]);
      for (const key of response.body.keys) {
        for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(member);
      }
      const token = (await post(request(server)).send(ccBody())).body.access_token;
      expect(decodeProtectedHeader(token).kid).toBe(next.kid);
    });
  });

  describe('token-retrieval API guard (requireAccessToken)', () => {
    async function token(server: Parameters<typeof request>[0], consumerId = CONSUMER_UUID): Promise<string> {
      return (await post(request(server), appTokenPath(consumerId)).send(ccBody())).body.access_token;
    }

    it('lets a token for this account and consumer through, with the claims', async () => {
      const { server } = await mount();
      const response = await request(server)
        .get(brandPath(ACCOUNT, CONSUMER_UUID))
        .set('authorization', `Bearer ${await token(server)}`);
      expect(response.status).toBe(200);
      expect(response.body.claims.sub).toBe(CONSUMER_UUID);
      expect(response.body.claims.client_id).toBe(CLIENT_ID);
    });

    it('refuses a missing token with a Bearer challenge', async () => {
      const { server } = await mount();
      const response = await request(server).get(brandPath(ACCOUNT, CONSUMER_UUID));
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="sentinel"/);
    });

    it.each([
      ['another consumer', async (t: string) => [brandPath(ACCOUNT, CONSUMER_HEX), t]],
      ['another account', async (t: string) => [brandPath(OTHER_ACCOUNT, CONSUMER_UUID), t]],
      [
        'a tampered payload',
        async (t: string) => {
          const [h, p, s] = t.split('.');
          const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
          claims.sub = CONSUMER_HEX;
          return [brandPath(ACCOUNT, CONSUMER_HEX), `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`];
        },
      ],
      ['garbage', async () => [brandPath(ACCOUNT, CONSUMER_UUID), 'not.a.jwt']],
    ])('refuses %s with 401 invalid_token', async (_name, build) => {
      const { server } = await mount();
      const [path, bearer] = await build(await token(server));
      const response = await request(server).get(path!).set('authorization', `Bearer ${bearer}`);
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="sentinel", error="invalid_token"/);
    });

    it('refuses expired tokens, other keys, alg none and the wrong typ', async () => {
      const { server } = await mount();
      const now = Math.floor(Date.now() / 1000);
      const claims = {
        iss: ACCOUNT_ISSUER,
        sub: CONSUMER_UUID,
        aud: ACCOUNT,
        client_id: CLIENT_ID,
        azp: CLIENT_ID,
        gty: 'client_credentials',
        jti: 'j',
      };
      const sign = async (key: typeof SIGNING_KEY, header: Record<string, unknown>, exp: number) =>
        new SignJWT(claims)
          .setProtectedHeader({ alg: 'ES256', kid: key.kid as string, typ: 'at+jwt', ...header })
          .setIssuedAt(now - 7200)
          .setExpirationTime(exp)
          .sign(await importJWK(key, 'ES256'));
      const other = generatePrivateJWK('ES256');
      const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid: SIGNING_KEY.kid })).toString('base64url')}.${Buffer.from(JSON.stringify({ ...claims, exp: now + 600 })).toString('base64url')}.`;
      const cases = [
        await sign(SIGNING_KEY, {}, now - 3600),
        await sign(other, { kid: SIGNING_KEY.kid }, now + 600),
        await sign(SIGNING_KEY, { typ: 'JWT' }, now + 600),
        unsigned,
      ];
      const valid = await sign(SIGNING_KEY, {}, now + 600);
      expect((await request(server).get(brandPath(ACCOUNT, CONSUMER_UUID)).set('authorization', `Bearer ${valid}`)).status).toBe(200);
      for (const bearer of cases) {
        const response = await request(server).get(brandPath(ACCOUNT, CONSUMER_UUID)).set('authorization', `Bearer ${bearer}`);
        expect(response.status).toBe(401);
      }
    });
  });

  describe('cc-only apps', () => {
    it('a cc-only app works, and its token is bound to the consumer it asked for', async () => {
      const { server } = await mount();
      const response = await post(request(server), appTokenPath(CONSUMER_HEX)).send(
        ccBody({ client_id: CC_ONLY_CLIENT_ID, client_secret: CC_ONLY_SECRET }),
      );
      expect(response.status).toBe(200);
      const guarded = await request(server)
        .get(brandPath(ACCOUNT, CONSUMER_HEX))
        .set('authorization', `Bearer ${response.body.access_token}`);
      expect(guarded.status).toBe(200);
    });
  });
}

appTokenSuite(HANDLE_HOST);
