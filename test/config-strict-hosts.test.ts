/**
 * The option objects typed in TypeScript only refuse a misspelled key too, at the moment the host passes them:
 * the guards' expectations, the fetch adapter, the stores, the PKCS#11 signer, and the expectations of
 * `verifyAccessToken()` and `checkBearer()`. Each would otherwise run with its default: a guard checking another
 * parameter, a store writing under the shared default prefix, a token of any account accepted.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { requireAccessToken as expressGuard } from '../adapters/express/index.js';
import { requireAccessToken as fetchGuard, toFetch } from '../adapters/fetch/index.js';
import { isConfigurationError, MemoryStore } from '../src/index.js';
import { PostgresAppStore } from '../src/postgres/index.js';
import { pkcs11Signer } from '../src/keys/signers/pkcs11.js';
import { RedisStore } from '../src/stores/redis.js';
import { expectationsReader } from '../src/guard/bearer-request.js';
import { consumerToken } from './helpers/direct-flow.js';
import { ACCOUNT, CONSUMER_UUID, makeSentinel, OTHER_ACCOUNT } from './helpers/fixtures.js';

function refusal(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    if (isConfigurationError(error)) return error.message;
    throw error;
  }
  throw new Error('accepted');
}

describe('options typed in TypeScript only', () => {
  it('requireAccessToken and toFetch', () => {
    const sentinel = makeSentinel();
    expect(refusal(() => expressGuard(sentinel, { consumerparam: 'consumer' } as never))).toBe(
      'sentinel-idp: invalid option requireAccessToken.consumerparam: unknown option "consumerparam" — did you mean "consumerParam"?',
    );
    expect(refusal(() => toFetch(sentinel, { mountpath: '/idp' } as never))).toMatch(/toFetch\.mountpath: .*did you mean "mountPath"\?$/);
    expect(() => expressGuard(sentinel, { consumerParam: 'consumer', accountParam: false })).not.toThrow();
  });

  it('requireAccessToken refuses a route without the parameter it was told to compare, rather than comparing nothing', async () => {
    const sentinel = makeSentinel();
    const token = await consumerToken(sentinel);
    const request = (): Request =>
      new Request(`http://localhost/api/tenants/${OTHER_ACCOUNT}/data`, { headers: { authorization: `Bearer ${token}` } });
    // `accountParam` names `tenantId`, the route's parameter is `tenant`: no account was compared, so a token of
    // ACCOUNT passed on OTHER_ACCOUNT's route.
    const misnamed = fetchGuard(sentinel, { accountParam: 'tenantId', consumerParam: false });
    const error = await misnamed(request(), { tenant: OTHER_ACCOUNT }).catch((caught: unknown) => caught);
    expect(isConfigurationError(error) && error.message).toBe(
      'sentinel-idp: invalid option requireAccessToken.accountParam: the guarded route has no parameter "tenantId" to compare with the token',
    );
    expect(isConfigurationError(await misnamed(request()).catch((caught: unknown) => caught))).toBe(true);
    // Named right, the parameter is compared.
    const named = fetchGuard(sentinel, { accountParam: 'tenant', consumerParam: false });
    const refused = await named(request(), { tenant: OTHER_ACCOUNT });
    expect(refused instanceof Response && refused.status).toBe(401);
    expect(await named(request(), { tenant: ACCOUNT })).toHaveProperty('claims');
    // A value that is not one string (an Express 5 wildcard's list) cannot be compared either, whatever the name.
    expect(refusal(() => expectationsReader()({ accountId: [OTHER_ACCOUNT, 'x'] }))).toBe(
      'sentinel-idp: invalid option requireAccessToken.accountParam: the route parameter "accountId" is not one string, so it cannot be compared with the token',
    );
    expect(refusal(() => expectationsReader({ consumerParam: 'consumer' })({ accountId: ACCOUNT }))).toMatch(
      /requireAccessToken\.consumerParam: the guarded route has no parameter "consumer"/,
    );
    // The default names are compared when the route has them, as before; an optional parameter left out is absent.
    expect(expectationsReader()({})).toEqual({ accountId: undefined, consumerId: undefined });
    expect(expectationsReader()(undefined)).toEqual({ accountId: undefined, consumerId: undefined });
    expect(expectationsReader({ accountParam: 'tenant' })({ tenant: undefined })).toEqual({ accountId: undefined, consumerId: undefined });
    expect(expectationsReader({ accountParam: 'tenant', consumerParam: false })({ tenant: ACCOUNT })).toEqual({
      accountId: ACCOUNT,
      consumerId: undefined,
    });
  });

  it('MemoryStore, RedisStore and PostgresAppStore', () => {
    expect(refusal(() => new MemoryStore({ securityMaxByte: 1024 } as never))).toMatch(
      /MemoryStore\.securityMaxByte: .*did you mean "securityMaxBytes"\?$/,
    );
    const redis = new Redis({ lazyConnect: true });
    expect(refusal(() => new RedisStore(redis, { prefx: 'idp:' } as never))).toMatch(/RedisStore\.prefx: .*did you mean "prefix"\?$/);
    expect(() => new RedisStore(redis, { prefix: 'idp:' })).not.toThrow();
    redis.disconnect();
    const url = 'postgres://postgres@127.0.0.1:5432/postgres';
    expect(refusal(() => new PostgresAppStore({ connectionString: url, maxConnection: 5 } as never))).toMatch(
      /PostgresAppStore\.maxConnection: .*did you mean "maxConnections"\?$/,
    );
    expect(refusal(() => new PostgresAppStore({ connectionString: url, cache: { ttl: 5 } } as never))).toMatch(
      /PostgresAppStore\.cache\.ttl: unknown option "ttl"/,
    );
  });

  it('pkcs11Signer, before it opens the module', () => {
    const options = { library: '/nonexistent/libpkcs11.so', pin: '1234', keyLable: 'signing' };
    const message = refusal(() => pkcs11Signer(options as never));
    expect(message).toMatch(/pkcs11Signer\.keyLable: .*did you mean "keyLabel"\?$/);
    expect(message).not.toContain('1234');
  });

  it('verifyAccessToken expectations', async () => {
    const sentinel = makeSentinel();
    const error = await sentinel.verifyAccessToken('not-a-token', { accountID: '123456' } as never).catch((caught: unknown) => caught);
    expect(isConfigurationError(error) && error.message).toBe(
      'sentinel-idp: invalid option verifyAccessToken.accountID: unknown option "accountID" — did you mean "accountId"?',
    );
    // Known options go on to the verification itself (a malformed token is invalid_token, not a configuration error).
    const invalid = await sentinel.verifyAccessToken('not-a-token', { accountId: '123456' }).catch((caught: unknown) => caught);
    expect(isConfigurationError(invalid)).toBe(false);
  });

  it('checkBearer expectations, which a host may call directly', async () => {
    const sentinel = makeSentinel();
    const token = await consumerToken(sentinel);
    const error = await sentinel.checkBearer(`Bearer ${token}`, { accountID: OTHER_ACCOUNT } as never).catch((caught: unknown) => caught);
    expect(isConfigurationError(error) && error.message).toBe(
      'sentinel-idp: invalid option checkBearer.accountID: unknown option "accountID" — did you mean "accountId"?',
    );
    expect((await sentinel.checkBearer(`Bearer ${token}`, { accountId: OTHER_ACCOUNT })).ok).toBe(false);
    expect((await sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT })).ok).toBe(true);
  });

  it('checkBearer reads expectations an object inherits or computes alike on a cache miss and on a hit', async () => {
    const sentinel = makeSentinel();
    const token = await consumerToken(sentinel);
    // A getter on the prototype: not an own property, so a spread of the options dropped it on the full path (the
    // first presentation, a miss) while the cached path, reading it by name, compared it.
    class Expectations {
      constructor(readonly account: string) {}
      get accountId(): string {
        return this.account;
      }
      get consumerId(): string {
        return CONSUMER_UUID;
      }
    }
    for (const attempt of ['miss', 'hit']) {
      const result = await sentinel.checkBearer(`Bearer ${token}`, new Expectations(OTHER_ACCOUNT) as never);
      expect(result.ok, attempt).toBe(false);
    }
    const inherited = Object.create({ accountId: OTHER_ACCOUNT }) as { accountId: string };
    expect((await makeSentinel().checkBearer(`Bearer ${token}`, inherited)).ok).toBe(false);
    expect((await sentinel.checkBearer(`Bearer ${token}`, new Expectations(ACCOUNT) as never)).ok).toBe(true);
  });

  it('checkBearer refuses a resource that is no resource indicator, as requireAccessToken does', async () => {
    const sentinel = makeSentinel();
    const token = await consumerToken(sentinel);
    for (const resource of ['not a url', 'https://mcp.example.com/mcp#x', 'ftp://mcp.example.com/']) {
      const guard = refusal(() => expressGuard(sentinel, { resource }));
      expect(guard).toMatch(/^sentinel-idp: invalid option requireAccessToken\.resource: /);
      // With and without a token: the answer to a request without one names the resource's metadata URL too.
      for (const authorization of [undefined, `Bearer ${token}`, 'Bearer not-a-token']) {
        const error = await sentinel.checkBearer(authorization, { resource }).catch((caught: unknown) => caught);
        expect(isConfigurationError(error) && error.message).toBe(guard.replace('requireAccessToken.', 'checkBearer.'));
      }
    }
  });
});
