/**
 * sentinel-idp in Express: the identity service, the platform's token-retrieval API behind `requireAccessToken`,
 * and a demo client page, in one process. Run `npm start` (or `node --import tsx examples/express/server.ts`).
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { requireAccessToken, sendSentinelResponse, toExpress } from 'sentinel-idp/express';
import { brandTokensAnswer, consumerIdProblem } from '../shared/brand-tokens.js';
import { createDemoClient } from '../shared/client.js';
import { createDemo, printBanner } from '../shared/demo.js';
import { startTelemetry } from '../shared/telemetry.js';

const telemetry = startTelemetry('express'); // SENTINEL_TELEMETRY=otel: OpenTelemetry SDK + GET /metrics
const demo = await createDemo({ framework: 'express', defaultPort: 3000 });
const client = createDemoClient(demo);

const app = express();
app.disable('x-powered-by');
if (telemetry !== null) app.get('/metrics', (req, res) => telemetry.metrics(req, res));

// The identity service: authorize, login, token endpoints, JWKS, metadata. Everything else goes to next().
app.use(toExpress(demo.sentinel));

// The platform's token-retrieval API: the token's account and consumer must be the ones in the path.
app.get(
  '/api/account/:accountId/consumer/:consumerId/brand/tokens',
  (req: Request<{ consumerId: string }>, res: Response, next: NextFunction) => {
    const problem = consumerIdProblem(req.params.consumerId);
    if (problem === null) return next();
    res.status(problem.status).json(problem.body);
  },
  requireAccessToken(demo.sentinel),
  (req: Request<{ accountId: string; consumerId: string }>, res: Response) => {
    const { status, body } = brandTokensAnswer(demo.brandTokens, req.params.accountId, req.params.consumerId);
    res.status(status).json(body);
  },
);

// The demo client ("Sign in with the platform").
app.get('/', (_req, res) => sendSentinelResponse(res, client.home()));
app.get('/signin', (_req, res, next) => {
  client.signIn().then((answer) => sendSentinelResponse(res, answer), next);
});
app.get('/callback', async (req, res, next) => {
  try {
    sendSentinelResponse(res, await client.callback(new URLSearchParams(req.url.split('?')[1] ?? ''), req.headers.cookie));
  } catch (error) {
    next(error);
  }
});

app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
  console.error(error);
  res.status(500).json({ error: 'server_error' });
});

app.listen(demo.port, demo.host, () => printBanner(demo));
