/**
 * A real back-channel logout receiver for the delivery suites: a node:http server on loopback (port 0) that reads
 * each `POST logout_token=…`, validates the token as OpenID Connect Back-Channel Logout 1.0 §2.6 asks (with jose,
 * against the service's JWKS), and answers what the test scripts (a status, or no answer at all).
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, type JWK, jwtVerify } from 'jose';

const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** One logout token the receiver took, validated. */
export interface ReceivedLogout {
  sid: string;
  sub: string;
  jti: string;
  /** The status the receiver answered (`0`: it never answered). */
  answered: number;
}

/** What to answer the `n`th request (from 1): a status, or `'hang'` (never answer). */
export type Script = (n: number) => number | 'hang';

/** A running receiver. */
export interface LogoutReceiver {
  /** `http://127.0.0.1:{port}/logout` */
  uri: string;
  /** Every token received, in order (valid or not: an invalid one fails the test through `problems`). */
  received: ReceivedLogout[];
  /** Every way a token failed §2.6 (must stay empty). */
  problems: string[];
  /** The most requests this receiver held unanswered at once (`'hang'` answers whose sender had not given up). */
  readonly mostHanging: number;
  /** Connections the receiver accepted (a kept-alive one carries many tokens). */
  readonly connections: number;
  /** Resolves once `count` tokens have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a receiver for the app `clientId` of the issuer `issuer`, validating against `jwks()`.
 *
 * @example const receiver = await startReceiver({ issuer, clientId, jwks: () => sentinel.jwks(), script: () => 200 });
 */
export async function startReceiver(input: {
  issuer: string;
  clientId: string;
  jwks: () => { keys: unknown[] };
  script?: Script;
  port?: number;
}): Promise<LogoutReceiver> {
  const received: ReceivedLogout[] = [];
  const problems: string[] = [];
  const hanging: ServerResponse[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const script = input.script ?? (() => 200);
  let requests = 0;
  let open = 0;
  let mostHanging = 0;
  let connections = 0;

  async function validate(request: IncomingMessage, body: string): Promise<Omit<ReceivedLogout, 'answered'> | null> {
    if (request.method !== 'POST') problems.push(`method ${request.method}`);
    if (request.headers['content-type'] !== 'application/x-www-form-urlencoded')
      problems.push(`content-type ${request.headers['content-type']}`);
    const token = new URLSearchParams(body).get('logout_token');
    if (token === null) {
      problems.push('no logout_token');
      return null;
    }
    try {
      // §2.6 steps 3 and 4: signature by a key of the issuer's JWKS, iss, aud, iat (and exp), and the explicit typ.
      const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(input.jwks() as { keys: JWK[] }), {
        issuer: input.issuer,
        audience: input.clientId,
        typ: 'logout+jwt',
        requiredClaims: ['iat', 'exp', 'jti'],
        maxTokenAge: '2 minutes',
      });
      if (protectedHeader.typ !== 'logout+jwt') problems.push(`typ ${protectedHeader.typ}`);
      // Step 5: sub or sid (this service sends both). Step 6: the events member, a JSON object. Step 7: no nonce.
      if (typeof payload.sid !== 'string' || typeof payload.sub !== 'string') problems.push('sid and sub');
      const events = payload.events as Record<string, unknown> | undefined;
      const member = events?.[EVENT];
      if (typeof member !== 'object' || member === null || Array.isArray(member)) problems.push('events member');
      if ('nonce' in payload) problems.push('nonce present');
      if ((payload.exp as number) - (payload.iat as number) > 120) problems.push('exp more than 2 minutes after iat');
      return { sid: payload.sid as string, sub: payload.sub as string, jti: payload.jti as string };
    } catch (error) {
      problems.push(`invalid: ${(error as Error).message}`);
      return null;
    }
  }

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const n = ++requests;
      void validate(request, Buffer.concat(chunks).toString()).then((token) => {
        const answer = script(n);
        if (token !== null) received.push({ ...token, answered: answer === 'hang' ? 0 : answer });
        for (const waiter of [...waiters]) {
          if (received.length >= waiter.count) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve();
          }
        }
        if (answer === 'hang') {
          hanging.push(response);
          open += 1;
          mostHanging = Math.max(mostHanging, open);
          response.once('close', () => {
            open -= 1;
          });
          return;
        }
        response.writeHead(answer, { 'cache-control': 'no-store' }).end();
      });
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  server.listen(input.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    uri: `http://127.0.0.1:${port}/logout`,
    received,
    problems,
    get mostHanging() {
      return mostHanging;
    },
    get connections() {
      return connections;
    },
    waitFor(count, timeoutMs = 20_000) {
      if (received.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${received.length} of ${count} logout tokens arrived`)), timeoutMs);
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
