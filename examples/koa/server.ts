/**
 * sentinel-idp in Koa: the identity service, the platform's token-retrieval API behind `requireAccessToken`, and a
 * demo client page, in one process. Run `node --import tsx examples/koa/server.ts` (port 3001).
 */
import Koa from 'koa';
import { requireAccessToken, sendSentinelResponse, toKoa } from 'sentinel-idp/koa';
import { brandTokensAnswer, consumerIdProblem } from '../shared/brand-tokens.js';
import { createDemoClient } from '../shared/client.js';
import { createDemo, printBanner } from '../shared/demo.js';
import { startTelemetry } from '../shared/telemetry.js';

const telemetry = startTelemetry('koa'); // SENTINEL_TELEMETRY=otel: OpenTelemetry SDK + GET /metrics
const demo = await createDemo({ framework: 'koa', defaultPort: 3001 });
const client = createDemoClient(demo);
const guard = requireAccessToken(demo.sentinel);
const BRAND_TOKENS = /^\/api\/account\/([^/]+)\/consumer\/([^/]+)\/brand\/tokens$/;

const app = new Koa();

app.use(async (ctx, next) => {
  try {
    await next();
  } catch (error) {
    console.error(error);
    ctx.status = 500;
    ctx.body = { error: 'server_error' };
  }
});

// Prometheus scrapes: the exporter writes the Node response itself.
app.use(async (ctx, next) => {
  if (telemetry === null || ctx.method !== 'GET' || ctx.path !== '/metrics') return next();
  ctx.respond = false;
  telemetry.metrics(ctx.req, ctx.res);
});

// The identity service: authorize, login, token endpoints, JWKS, metadata. Everything else goes to next().
app.use(toKoa(demo.sentinel));

// The platform's token-retrieval API (with @koa/router: router.get(path, requireAccessToken(sentinel), handler)).
app.use(async (ctx, next) => {
  const found = ctx.method === 'GET' ? BRAND_TOKENS.exec(ctx.path) : null;
  if (found === null) return next();
  const [accountId, consumerId] = [decodeURIComponent(found[1] ?? ''), decodeURIComponent(found[2] ?? '')];
  const problem = consumerIdProblem(consumerId);
  if (problem !== null) {
    ctx.status = problem.status;
    ctx.body = problem.body;
    return;
  }
  ctx.params = { accountId, consumerId };
  await guard(ctx, async () => {
    const { status, body } = brandTokensAnswer(demo.brandTokens, accountId, consumerId);
    ctx.status = status;
    ctx.body = body;
  });
});

// The demo client ("Sign in with the platform").
app.use(async (ctx, next) => {
  if (ctx.method !== 'GET') return next();
  if (ctx.path === '/') sendSentinelResponse(ctx, client.home());
  else if (ctx.path === '/signin') sendSentinelResponse(ctx, await client.signIn());
  else if (ctx.path === '/callback')
    sendSentinelResponse(ctx, await client.callback(new URLSearchParams(ctx.querystring), ctx.get('cookie')));
  else await next();
});

app.listen(demo.port, demo.host, () => printBanner(demo));
