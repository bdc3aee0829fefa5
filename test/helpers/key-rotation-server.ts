/**
 * One instance for the two-process key rotation test: Express with sentinel-idp over a shared Redis, keys from a
 * `keyRotation` ring, a guarded API, and two operator endpoints (`POST /ops/rotate`, `POST /ops/revoke?kid=`) that
 * call `sentinel.rotateKeys()` / `revokeKey()`. Configuration comes from the environment (see the test).
 * Awaits `sentinel.ready()` before listening, so a wrong encryption key stops the start with its message.
 */
import express from 'express';
import { Redis } from 'ioredis';
import { requireAccessToken, toExpress } from '../../adapters/express/index.js';
import { createSentinel, isConfigurationError } from '../../src/index.js';
import { RedisStore } from '../../src/stores/redis.js';
import { baseOptions } from './fixtures.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};

const redis = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: 1 });
const sentinel = createSentinel(
  baseOptions({
    keys: undefined,
    store: new RedisStore(redis, { prefix: env('REDIS_PREFIX') }),
    jwksMaxAge: 1,
    accessTokenTtl: 10,
    idTokenTtl: 10,
    keyRotation: {
      encryptionKey: env('ENCRYPTION_KEY'),
      rotateEverySeconds: Number(env('ROTATE_EVERY')),
      prePublishSeconds: 2,
      refreshSeconds: 1,
    },
    onError: (error) => console.error(`[${process.env.INSTANCE}] onError: ${error instanceof Error ? error.message : 'failure'}`),
  }),
);

try {
  await sentinel.ready();
} catch (error) {
  console.error(`startup failed: ${isConfigurationError(error) ? error.message : 'store failure'}`);
  redis.disconnect();
  process.exit(3);
}

const app = express();
app.use(toExpress(sentinel));
app.get('/api/account/:accountId/consumer/:consumerId/ping', requireAccessToken(sentinel), (_request, response) => {
  response.json({ ok: true, instance: process.env.INSTANCE });
});
app.post('/ops/rotate', async (_request, response) => {
  response.json(await sentinel.rotateKeys());
});
app.post('/ops/revoke', async (request, response) => {
  response.json({ revoked: await sentinel.revokeKey(String(request.query.kid)) });
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on ${typeof address === 'object' && address !== null ? address.port : ''}`);
});
