/**
 * The hosts every black-box suite runs against. A host mounts a sentinel in one framework and listens on an
 * ephemeral 127.0.0.1 port; suites talk to it over real HTTP (supertest against `server`).
 *
 * Each host also mounts, next to the service, a host route (`GET /host/ping` → 200 "pong") and the token-retrieval
 * API (`GET /api/account/:accountId/consumer/:consumerId/brand/tokens` guarded by `requireAccessToken`, answering
 * the verified claims as JSON), so suites can check that both keep working.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express5 from 'express';
// @ts-expect-error express4 is an npm alias of express@4 without its own type declarations
import express4Untyped from 'express4';
import type { Sentinel } from '../src/index.js';
import { requireAccessToken, toExpress } from '../adapters/express/index.js';

const express4 = express4Untyped as typeof express5;

/** How a suite wants the host built. */
export interface MountOptions {
  /** Mount the service under this prefix (e.g. '/idp'). */
  prefix?: string;
  /** Which host body parser runs, and where: none, before the service, or after it. */
  bodyParser?: 'none' | 'before' | 'after';
  /** Receives errors the framework's error handler sees. */
  onHostError?: (error: unknown) => void;
}

/** A running host. */
export interface MountedHost {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** A framework under test. */
export interface Host {
  name: string;
  mount(sentinel: Sentinel, options?: MountOptions): Promise<MountedHost>;
}

/** Listens on 127.0.0.1:0 and returns the running host. */
export async function listen(server: Server): Promise<MountedHost> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function expressHost(name: string, factory: typeof express5): Host {
  return {
    name,
    async mount(sentinel, options = {}) {
      const app = factory();
      const parser = options.bodyParser ?? 'none';
      if (parser === 'before') app.use(factory.urlencoded({ extended: true }), factory.json());
      app.get('/host/ping', (_request, response) => {
        response.type('text/plain').send('pong');
      });
      if (options.prefix === undefined) app.use(toExpress(sentinel));
      else app.use(options.prefix, toExpress(sentinel));
      if (parser === 'after') app.use(factory.urlencoded({ extended: false }));
      app.get('/api/account/:accountId/consumer/:consumerId/brand/tokens', requireAccessToken(sentinel), (request, response) => {
        response.json({ claims: (request as unknown as { sentinel: unknown }).sentinel });
      });
      app.use((error: unknown, _request: unknown, response: express5.Response, _next: unknown) => {
        options.onHostError?.(error);
        response.status(500).type('text/plain').send('host error handler');
      });
      return listen(createServer(app));
    },
  };
}

/** Every host the black-box suites run against. Other adapters append themselves here. */
export const HOSTS: Host[] = [expressHost('express4', express4), expressHost('express5', express5)];
