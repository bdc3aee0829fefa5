/**
 * One instance of a multi-instance deployment: Express with sentinel-idp over a shared Redis, the guarded
 * token-retrieval API, and the demo application. `start.ts` runs two of these behind a round-robin proxy; in
 * production it is one container or process per instance.
 *
 * Everything that must be identical on every instance comes from the environment:
 * - `SENTINEL_KEYS`: the signing keys (a JSON array of private JWKs). An instance that generated its own key would
 *   sign tokens the others cannot verify, and publish a JWKS that differs from theirs.
 * - `REDIS_URL` and `REDIS_PREFIX`: codes, sessions, interactions, refresh families, revocations and throttles.
 * - `ISSUER`: the public URL (the proxy's), so every instance builds the same `iss`, metadata and redirects.
 * - `SENTINEL_CLIENT_ID`, `SENTINEL_CLIENT_SECRET`, `DEMO_PASSWORD`: the demo app and user.
 * And per instance: `PORT` (0: any free port, named on the "listening on" line), `HOST` (127.0.0.1), `INSTANCE` (a name shown in the `x-instance` header).
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { Redis } from 'ioredis';
import { createSentinel, type JWK } from 'sentinel-idp';
import { requireAccessToken, toExpress } from 'sentinel-idp/express';
import { RedisStore, redisClientOptions } from 'sentinel-idp/redis';
import { brandTokensAnswer, consumerIdProblem, createBrandTokenStore, DEMO_CONSUMERS } from '../shared/brand-tokens.js';
import { createUserStore } from '../shared/user-store.js';
import { ACCOUNT_ID } from './account.js';
import { createDemoClient } from '../shared/client.js';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    console.error(`${name} is required: every instance must get the same value (start.ts sets it for both).`);
    process.exit(1);
  }
  return value;
}

function readKeys(): JWK[] {
  const keys: unknown = JSON.parse(required('SENTINEL_KEYS'));
  if (!Array.isArray(keys) || keys.length === 0) throw new Error('SENTINEL_KEYS must be a non-empty JSON array of private JWKs');
  return keys as JWK[];
}

const instance = process.env.INSTANCE ?? String(process.pid);
const port = Number(process.env.PORT ?? 4001);
let boundPort = port;
const host = process.env.HOST ?? '127.0.0.1';
const issuer = required('ISSUER').replace(/\/+$/, '');
const clientId = required('SENTINEL_CLIENT_ID');
const clientSecret = required('SENTINEL_CLIENT_SECRET');
const redisURL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = process.env.REDIS_PREFIX ?? 'sentinel:';

// Fail fast while Redis is unreachable: no offline queue (reject at once instead of parking the command), one retry
// per command, and a per-command timeout for a Redis that accepts connections but does not answer. A request then
// fails in about a second with 500 server_error instead of hanging; ioredis keeps reconnecting in the background,
// so the instance recovers by itself when Redis is back.
// redisClientOptions() also reconnects every 200 ms at most, so the instance works again soon after Redis is back.
const redis = new Redis(redisURL, redisClientOptions());
let redisDown = false;
redis.on('error', (error: Error) => {
  // One line per outage, not one per reconnection attempt.
  if (!redisDown) console.error(`[${instance}] Redis unreachable (${error.message}); answering 500 until it is back`);
  redisDown = true;
});
redis.on('ready', () => {
  if (redisDown) console.error(`[${instance}] Redis is back`);
  redisDown = false;
});

const store = new RedisStore(redis, { prefix, commandTimeoutMs: 1500 });
const users = createUserStore();
await users.addUser({ id: 'user-demo-1', accountId: ACCOUNT_ID, username: 'demo', password: required('DEMO_PASSWORD'), name: 'Demo User' });
const redirectUri = `${issuer}/callback`;
const postLogoutRedirectUri = `${issuer}/signed-out`;

const sentinel = createSentinel({
  issuer,
  apps: [
    {
      accountId: ACCOUNT_ID,
      clientId,
      clientSecret,
      name: 'Demo application',
      redirectUris: [redirectUri],
      postLogoutRedirectUris: [postLogoutRedirectUri],
      grantTypes: ['authorization_code', 'client_credentials', 'refresh_token'],
    },
  ],
  users,
  keys: readKeys(),
  store,
  pkce: 'required',
  // The proxy in front sets X-Forwarded-For; believe it (for login throttling per client address) only because
  // nothing but the proxy can reach this port. Never turn this on for an instance that is reachable directly.
  trustProxy: true,
  // The store's errors carry no keys or values, so they are safe to log.
  onError: (error, context) =>
    console.error(`[${instance}] sentinel-idp ${context.route}:`, error instanceof Error ? error.message : error),
});

const brandTokens = createBrandTokenStore(ACCOUNT_ID);
const client = createDemoClient({
  issuer,
  // Read at each call: with PORT=0 the port is known only once the server listens (below).
  get internalURL() {
    return `http://127.0.0.1:${boundPort}`;
  },
  sentinel,
  accountId: ACCOUNT_ID,
  clientId,
  clientSecret,
  redirectUri,
  postLogoutRedirectUri,
  consumerId: DEMO_CONSUMERS[0],
  store: new RedisStore(redis, { prefix: `${prefix}demo-client:`, commandTimeoutMs: 1500 }),
  instance,
});

const app = express();
app.disable('x-powered-by');
app.use((_req, res, next) => {
  res.setHeader('x-instance', instance);
  next();
});

app.use(toExpress(sentinel));

app.get(
  '/api/account/:accountId/consumer/:consumerId/brand/tokens',
  (req: Request<{ consumerId: string }>, res: Response, next: NextFunction) => {
    const problem = consumerIdProblem(req.params.consumerId);
    if (problem === null) return next();
    res.status(problem.status).json(problem.body);
  },
  requireAccessToken(sentinel),
  (req: Request<{ accountId: string; consumerId: string }>, res: Response) => {
    const { status, body } = brandTokensAnswer(brandTokens, req.params.accountId, req.params.consumerId);
    res.status(status).json(body);
  },
);

// The demo application's pages; sign-ins and sessions in Redis, so any instance can answer any step.
app.use(toExpress(client));
app.get('/healthz', (_req, res) => {
  res.status(redis.status === 'ready' ? 200 : 503).json({ instance, redis: redis.status });
});

app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
  // Express's own refusals of the request (a route parameter that does not percent-decode) carry a 4xx status: bad
  // input is the client's, answered as such, not logged and answered as a server error.
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    res.status(status).json({ error: 'invalid_request' });
    return;
  }
  console.error(`[${instance}]`, error instanceof Error ? error.message : error);
  res.status(500).json({ error: 'server_error', error_description: 'the server could not complete the request' });
});

// Before listening: the store's checks (its eviction policy) and its replay epoch, read now so that this instance
// sees Redis lose its replay markers even before it spends one.
await sentinel.ready();

// The port actually bound: with PORT=0 the system picks one, and this line is how a supervisor learns it.
// Express 5 calls this back with the error when the port cannot be had: no "listening on" line then, or the
// supervisor would send this instance's share of the traffic to whatever holds the port.
const server = app.listen(port, host, (error) => {
  if (error !== undefined) {
    console.error(`instance ${instance} cannot listen on ${host}:${port}: ${error.message}`);
    process.exit(1);
  }
  const bound = server.address();
  if (typeof bound === 'object' && bound !== null) boundPort = bound.port;
  console.log(`instance ${instance} listening on http://${host}:${boundPort}`);
});

function shutdown(): void {
  server.close(() => {
    redis.disconnect();
    process.exit(0);
  });
  server.closeAllConnections();
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
