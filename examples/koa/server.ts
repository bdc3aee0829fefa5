/**
 * sentinel-idp in Koa: the identity service with its account page, the operator console, the platform's
 * token-retrieval API behind `requireAccessToken`, and the demo application's pages, in one process. Run
 * `npm run start:koa` (port 3001); it prints where each page is.
 */
import Koa from 'koa';
import { requireAccessToken, toKoa } from 'sentinel-idp/koa';
import { brandTokensAnswer, consumerIdProblem } from '../shared/brand-tokens.js';
import { createDemo, printBanner } from '../shared/demo.js';
import { startTelemetry } from '../shared/telemetry.js';

const telemetry = startTelemetry('koa'); // SENTINEL_TELEMETRY=otel: OpenTelemetry SDK + GET /metrics
const demo = await createDemo({ framework: 'koa', defaultPort: 3001 });
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

// The identity service: authorize, login, token endpoints, JWKS, metadata, the account page. Everything else
// goes to next(). The operator console mounts the same way, at /console/.
app.use(toKoa(demo.sentinel));
app.use(toKoa(demo.operatorConsole));

// The platform's token-retrieval API (with @koa/router: router.get(path, requireAccessToken(sentinel), handler)).
app.use(async (ctx, next) => {
  const found = ctx.method === 'GET' ? BRAND_TOKENS.exec(ctx.path) : null;
  if (found === null) return next();
  let accountId: string;
  let consumerId: string;
  try {
    [accountId, consumerId] = [decodeURIComponent(found[1] ?? ''), decodeURIComponent(found[2] ?? '')];
  } catch {
    // A path segment that does not percent-decode is the client's mistake: 400, not the 500 of the catch-all.
    ctx.status = 400;
    ctx.body = { error: 'invalid_request' };
    return;
  }
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

// The demo application's pages (the same handler in every framework): home, sign-in, callback, the buttons.
app.use(toKoa(demo.client));

app.listen(demo.port, demo.host, () => printBanner(demo));
