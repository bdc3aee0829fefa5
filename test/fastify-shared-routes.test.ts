/**
 * Fastify refuses a route declared twice, and the service and the operator console both answer under
 * `/.well-known/`: mounted side by side in either order, each still serves its own paths, and a well-known path
 * neither knows falls through to the host's not-found handler.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { toFastify } from '../adapters/fastify/index.js';
import { createConsole } from '../src/console/index.js';
import { ACCOUNT, ISSUER, makeSentinel } from './helpers/fixtures.js';

const METADATA = `/.well-known/oauth-authorization-server/sentinel/api/account/${ACCOUNT}`;

describe('fastify: the service and the console on one instance', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
  });

  it.each(['service first', 'console first'])('serves both, %s', async (order) => {
    const sentinel = makeSentinel();
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    app = Fastify();
    const plugins = [toFastify(sentinel), toFastify(operatorConsole)];
    for (const plugin of order === 'service first' ? plugins : plugins.reverse()) await app.register(plugin);
    app.get('/host/ping', async () => 'pong');
    await app.ready();

    const metadata = await app.inject({ url: METADATA });
    expect(metadata.statusCode).toBe(200);
    expect(metadata.json()).toMatchObject({ issuer: `${ISSUER}/sentinel/api/account/${ACCOUNT}` });
    const page = await app.inject({ url: '/console/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect((await app.inject({ url: '/.well-known/nothing-here' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/host/ping' })).body).toBe('pong');
  });
});
