/**
 * sentinel-idp in Fastify: the identity service with its account page as an encapsulated plugin, the operator
 * console, the platform's token-retrieval API behind `requireAccessToken`, and the demo application's pages, in
 * one process. Run `npm run start:fastify` (port 3002); it prints where each page is.
 */
import Fastify from 'fastify';
import { requireAccessToken, toFastify } from 'sentinel-idp/fastify';
import { brandTokensAnswer, consumerIdProblem } from '../shared/brand-tokens.js';
import { createDemo, printBanner } from '../shared/demo.js';
import { startTelemetry } from '../shared/telemetry.js';

const telemetry = startTelemetry('fastify'); // SENTINEL_TELEMETRY=otel: OpenTelemetry SDK + GET /metrics
const demo = await createDemo({ framework: 'fastify', defaultPort: 3002 });

interface BrandTokensRoute {
  Params: { accountId: string; consumerId: string };
}

const app = Fastify();

// Prometheus scrapes: the exporter writes the Node response itself.
if (telemetry !== null) {
  app.get('/metrics', (request, reply) => {
    reply.hijack();
    telemetry.metrics(request.raw, reply.raw);
  });
}

// The identity service: authorize, login, token endpoints, JWKS, metadata, the account page, with its own body
// parsing. The operator console registers the same way, at /console/.
await app.register(toFastify(demo.sentinel));
await app.register(toFastify(demo.operatorConsole));

// The platform's token-retrieval API: the token's account and consumer must be the ones in the path.
app.get<BrandTokensRoute>(
  '/api/account/:accountId/consumer/:consumerId/brand/tokens',
  {
    preHandler: [
      async (request, reply) => {
        const problem = consumerIdProblem(request.params.consumerId);
        if (problem !== null) return reply.code(problem.status).send(problem.body);
      },
      requireAccessToken(demo.sentinel),
    ],
  },
  async (request, reply) => {
    const { status, body } = brandTokensAnswer(demo.brandTokens, request.params.accountId, request.params.consumerId);
    return reply.code(status).send(body);
  },
);

// The demo application's pages (the same handler in every framework): home, sign-in, callback, the buttons.
await app.register(toFastify(demo.client));

await app.listen({ port: demo.port, host: demo.host });
printBanner(demo);
