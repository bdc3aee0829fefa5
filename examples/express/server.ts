/**
 * sentinel-idp in Express: the identity service with its account page, the operator console, the platform's
 * token-retrieval API behind `requireAccessToken`, and the demo application's pages, in one process. Run
 * `npm start` (or `node --import tsx examples/express/server.ts`); it prints where each page is.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { requireAccessToken, toExpress } from 'sentinel-idp/express';
import { brandTokensAnswer, consumerIdProblem } from '../shared/brand-tokens.js';
import { createDemo, printBanner } from '../shared/demo.js';
import { startTelemetry } from '../shared/telemetry.js';

const telemetry = startTelemetry('express'); // SENTINEL_TELEMETRY=otel: OpenTelemetry SDK + GET /metrics
const demo = await createDemo({ framework: 'express', defaultPort: 3000 });

const app = express();
app.disable('x-powered-by');
if (telemetry !== null) app.get('/metrics', (req, res) => telemetry.metrics(req, res));

// The identity service: authorize, login, token endpoints, JWKS, metadata, the account page. Everything else
// goes to next(). The operator console mounts the same way, at /console/.
app.use(toExpress(demo.sentinel));
app.use(toExpress(demo.operatorConsole));

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

// The demo application's pages (the same handler in every framework): home, sign-in, callback, the buttons.
app.use(toExpress(demo.client));

app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
  // Express's own refusals of the request (a route parameter that does not percent-decode, a body too large) carry
  // a 4xx status: bad input is the client's, answered as such, not a server error.
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    res.status(status).json({ error: 'invalid_request' });
    return;
  }
  console.error(error);
  res.status(500).json({ error: 'server_error' });
});

// Express 5 calls this back with the error when the port cannot be had (taken by another program, say): the banner
// must not announce a server that is not there, nor the process end as if it had served.
app.listen(demo.port, demo.host, (error) => {
  if (error !== undefined) {
    console.error(`sentinel-idp express example cannot listen on ${demo.host}:${demo.port}: ${error.message}`);
    process.exit(1);
  }
  printBanner(demo);
});
