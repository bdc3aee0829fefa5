/**
 * sentinel-idp in Fastify: the identity service as an encapsulated plugin, the platform's token-retrieval API
 * behind `requireAccessToken`, and a demo client page, in one process. Run
 * `node --import tsx examples/fastify/server.ts` (port 3002).
 */
import Fastify from 'fastify';
import { requireAccessToken, sendSentinelResponse, toFastify } from 'sentinel-idp/fastify';
import { brandTokensAnswer, consumerIdProblem } from '../shared/brand-tokens.js';
import { createDemoClient } from '../shared/client.js';
import { createDemo, printBanner } from '../shared/demo.js';
import { startTelemetry } from '../shared/telemetry.js';

const telemetry = startTelemetry('fastify'); // SENTINEL_TELEMETRY=otel: OpenTelemetry SDK + GET /metrics
const demo = await createDemo({ framework: 'fastify', defaultPort: 3002 });
const client = createDemoClient(demo);

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

// The identity service: authorize, login, token endpoints, JWKS, metadata, with its own body parsing.
await app.register(toFastify(demo.sentinel));

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

// The demo client ("Sign in with the platform").
app.get('/', async (_request, reply) => sendSentinelResponse(reply, client.home()));
app.get('/signin', async (_request, reply) => sendSentinelResponse(reply, await client.signIn()));
app.get('/callback', async (request, reply) => {
  const query = new URLSearchParams(request.url.split('?')[1] ?? '');
  return sendSentinelResponse(reply, await client.callback(query, request.headers.cookie));
});

await app.listen({ port: demo.port, host: demo.host });
printBanner(demo);
