/**
 * External login through Express: the host's own login route finishes the interaction with
 * `sentinel.completeLogin()` and writes the answer with the adapter's one-line `sendSentinelResponse()`.
 */
import { createServer } from 'node:http';
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { sendSentinelResponse, toExpress } from '../adapters/express/index.js';
import { ACCOUNT, CLIENT_ID, REDIRECT_URI, makeSentinel } from './helpers/fixtures.js';
import { listen, type MountedHost } from './helpers/hosts.js';

const open: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((host) => host.close()));
});

describe('external login with Express', () => {
  it('authorize → host login page → completeLogin → 303 to the app, then the session skips the login', async () => {
    const sentinel = makeSentinel({ login: { url: '/account/sign-in' } });
    const app = express();
    app.use(toExpress(sentinel));
    app.get('/account/sign-in', (req, res, next) => {
      // The host authenticates its own way (here: always "u-host"), then hands the interaction back.
      sentinel.completeLogin(String(req.query.interaction), { userId: 'u-host' }).then((result) => sendSentinelResponse(res, result), next);
    });
    const host = await listen(createServer(app));
    open.push(host);
    const agent = request.agent(host.server);
    const authorize = `/sentinel/api/account/${ACCOUNT}/authorize?response_type=code&client_id=${CLIENT_ID}&state=s1`;
    const start = await agent.get(authorize);
    expect(start.status).toBe(302);
    expect(start.headers.location).toMatch(/^\/account\/sign-in\?interaction=[A-Za-z0-9_-]{43}$/);
    const done = await agent.get(start.headers.location as string);
    expect(done.status).toBe(303);
    expect(done.headers.location).toMatch(new RegExp(`^${REDIRECT_URI}\\?code=[A-Za-z0-9_-]{43}&state=s1&iss=`));
    const again = await agent.get(authorize);
    expect(again.headers.location).toMatch(new RegExp(`^${REDIRECT_URI}\\?code=`));
    const expired = await agent.get(start.headers.location as string);
    expect(expired.status).toBe(400);
    expect(expired.headers['content-type']).toMatch(/^text\/html/);
  });
});
