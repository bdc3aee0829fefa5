/**
 * The app-side receiver of examples/backchannel-logout: it takes the service's logout tokens (the app's session of
 * that sid ends) and refuses what §2.6 refuses: an ID token passed off as a logout token, and a replayed token; it
 * fetches the issuer's keys once, not once per token.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { createLocalJWKSet, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogoutReceiver, validateLogoutToken } from '../examples/backchannel-logout/receiver.js';
import type { Sentinel } from '../src/index.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { signInWithSession } from './helpers/logout-flow.js';

const ISSUER_OF_ACCOUNT = `http://localhost/sentinel/api/account/${ACCOUNT}`;
const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

async function post(uri: string, token: string): Promise<number> {
  const response = await fetch(uri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ logout_token: token }),
  });
  return response.status;
}

describe('examples/backchannel-logout receiver', () => {
  it('ends the sid the service names, and refuses an ID token and a replay', async () => {
    let sentinel: Sentinel | undefined;
    const logouts: { sid?: string; sub?: string }[] = [];
    const tokens: string[] = [];
    const server = createLogoutReceiver({
      issuer: ISSUER_OF_ACCOUNT,
      clientId: CLIENT_ID,
      keys: (header, token) => createLocalJWKSet((sentinel as Sentinel).jwks() as { keys: JWK[] })(header, token),
      onLogout: (logout) => void logouts.push(logout),
    });
    // Tap the raw bodies, to replay one below.
    server.prependListener('request', (request) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on('end', () => tokens.push(new URLSearchParams(body).get('logout_token') ?? ''));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closing.push(async () => {
      server.closeAllConnections();
      server.close();
    });
    const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/backchannel-logout`;
    const apps = (baseOptions().apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, backchannelLogoutUri: uri } : app));
    sentinel = makeSentinel({ apps, clientJwks: { allowPrivateAddresses: true } });
    closing.push(() => (sentinel as Sentinel).close());

    const { tokens: signedIn } = await signInWithSession(sentinel);
    await sentinel.endSession({ accountId: ACCOUNT, sid: signedIn.sid });
    const started = Date.now();
    while (logouts.length === 0 && Date.now() - started < 10_000) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(logouts).toEqual([{ sid: signedIn.sid, sub: USER_ID }]);

    expect(await post(uri, signedIn.idToken)).toBe(400);
    expect(await post(uri, tokens[0] as string)).toBe(400);
    expect(logouts).toHaveLength(1);
  });

  it("fetches the account's keys once for the logout tokens it takes, not once per token", async () => {
    let sentinel: Sentinel | undefined;
    let fetched = 0;
    // The service's JWKS at the issuer's jwks_uri, counted: the receiver finds it from the issuer alone.
    const keys = createServer((_request, response) => {
      fetched++;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify((sentinel as Sentinel).jwks()));
    });
    keys.listen(0, '127.0.0.1');
    await once(keys, 'listening');
    const issuer = `http://127.0.0.1:${(keys.address() as AddressInfo).port}`;
    const logouts: { sid?: string; sub?: string }[] = [];
    const server = createLogoutReceiver({
      issuer: `${issuer}/sentinel/api/account/${ACCOUNT}`,
      clientId: CLIENT_ID,
      onLogout: (logout) => void logouts.push(logout),
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closing.push(async () => {
      for (const listening of [server, keys]) {
        listening.closeAllConnections();
        listening.close();
      }
    });
    const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/backchannel-logout`;
    const apps = (baseOptions().apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, backchannelLogoutUri: uri } : app));
    sentinel = makeSentinel({ issuer, apps, clientJwks: { allowPrivateAddresses: true } });
    closing.push(() => (sentinel as Sentinel).close());

    const sids: string[] = [];
    for (let session = 0; session < 3; session++) sids.push((await signInWithSession(sentinel)).tokens.sid);
    expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(3);
    const started = Date.now();
    while (logouts.length < 3 && Date.now() - started < 10_000) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(logouts.map((logout) => logout.sid).sort()).toEqual(sids.sort());
    expect(fetched).toBe(1);
  });

  it('stops reading a body past its limit: 413, the connection closed, the rest never held in memory', async () => {
    const server = createLogoutReceiver({ issuer: ISSUER_OF_ACCOUNT, clientId: CLIENT_ID, onLogout: () => {} });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closing.push(async () => {
      server.closeAllConnections();
      server.close();
    });
    // A body announced at 256 MiB, sent until the receiver hangs up or 48 MiB went: a receiver that kept collecting
    // after its refusal read all of it (and past V8's longest string, threw outside any handler and died).
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(socket, 'connect');
    let answer = '';
    let ended = false;
    socket.on('data', (data: Buffer) => {
      answer += data.toString();
    });
    socket.on('close', () => {
      ended = true;
    });
    socket.on('error', () => {
      ended = true;
    });
    socket.write(
      `POST / HTTP/1.1\r\nhost: app\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: ${256 * 2 ** 20}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(2 ** 16, 'a');
    let sent = 0;
    while (!ended && sent < 48 * 2 ** 20) {
      // `once` rejects on the socket's error: the receiver hanging up is what the loop waits for.
      if (!socket.write(chunk)) await Promise.race([once(socket, 'drain').catch(() => undefined), new Promise((r) => setTimeout(r, 50))]);
      sent += chunk.length;
    }
    const started = Date.now();
    while (!ended && Date.now() - started < 2000) await new Promise((resolve) => setTimeout(resolve, 25));
    socket.destroy();
    expect(sent, 'the receiver hung up before the body was sent').toBeLessThan(48 * 2 ** 20);
    expect(ended, 'the receiver closed the connection').toBe(true);
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
  });

  it("takes a token whose iat is a second or two ahead of the app's clock (clocks drift; a 400 is final)", async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const keys = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] });
    const iat = Math.floor(Date.now() / 1000) + 2;
    const token = await new SignJWT({
      sid: 'a-sid',
      events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
    })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'logout+jwt' })
      .setIssuer(ISSUER_OF_ACCOUNT)
      .setAudience(CLIENT_ID)
      .setSubject(USER_ID)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 120)
      .setJti('jti-ahead')
      .sign(privateKey);
    const options = { issuer: ISSUER_OF_ACCOUNT, clientId: CLIENT_ID, keys, onLogout: () => {} };
    expect(await validateLogoutToken(token, options, new Map())).toEqual({ sid: 'a-sid', sub: USER_ID });
  });
});
