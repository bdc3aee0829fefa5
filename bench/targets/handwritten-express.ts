/** Baseline: the same hand-written endpoint in Express 5 with express.urlencoded (see handwritten-core.ts). */
import type { Server } from 'node:http';
import express from 'express';
import { HOST, issuerFor } from '../fixtures.js';
import { createIssuer, TOKEN_HEADERS } from './handwritten-core.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen } from './util.js';

export async function start(port: number): Promise<RunningTarget> {
  const issue = await createIssuer(issuerFor(port));
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.post('/sentinel/api/v2/account/:accountId/app/token', express.urlencoded({ extended: false }), async (req, res, next) => {
    try {
      const body = req.body !== undefined && typeof req.body === 'object' ? (req.body as Record<string, string | string[]>) : undefined;
      const query = req.query as Record<string, string | string[] | undefined>;
      const outcome = await issue(req.params.accountId, req.get('content-type'), query, body);
      res.status(outcome.status).set(TOKEN_HEADERS).send(outcome.body);
    } catch (err) {
      next(err);
    }
  });
  const server: Server = await listen(app, port, HOST);
  return { close: () => closeServer(server) };
}
