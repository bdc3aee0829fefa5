/**
 * The hand-written baseline of bench/logout-delivery.ts: what an engineer would write to tell apps that sessions
 * ended, without a queue or a store — jose signs one logout token per app and session (the claims sentinel-idp's
 * logout tokens carry: iss, sub, aud, iat, exp, jti, sid and the back-channel logout `events` member, header
 * `typ: logout+jwt`, ES256) and node:http (node:https for https receivers) POSTs it form-encoded over keep-alive
 * connections, a fixed number in flight. Each delivery is done when its answer's status line is in (200, or the
 * run fails).
 *
 * oidc-provider is not driven here: it sends back-channel logout only from its browser end-session form, not from a
 * call a host could make per session.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { generateKeyPair, SignJWT } from 'jose';

/** One logout token to deliver: the app's receiver and whom the token is about. */
export interface Delivery {
  url: string;
  clientId: string;
  userId: string;
  sid: string;
}

/** What the baseline took for all its deliveries. */
export interface BaselineResult {
  /** From the first signature to the last answer. */
  ms: number;
  /** This process's user + system CPU over that span. */
  cpuUs: number;
}

const EVENTS = { 'http://schemas.openid.net/event/backchannel-logout': {} };

/** POSTs one form body and resolves with the status (the answer's body is drained, never read). */
function post(agent: Agent, url: URL, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = (url.protocol === 'https:' ? httpsRequest : request)(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
      },
      (answer) => {
        answer.resume();
        answer.on('end', () => resolve(answer.statusCode ?? 0));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/**
 * Signs and delivers every logout token of `deliveries`, `inFlight` at a time over keep-alive connections.
 *
 * @example
 * const { ms, cpuUs } = await deliverByHand('http://localhost/sentinel/api/account/a', deliveries, 32);
 */
export async function deliverByHand(issuer: string, deliveries: readonly Delivery[], inFlight: number): Promise<BaselineResult> {
  const { privateKey } = await generateKeyPair('ES256');
  const kid = randomBytes(8).toString('hex');
  // Every receiver of one run has the same scheme: the agent is the one its requests need.
  const https = deliveries.some((delivery) => delivery.url.startsWith('https:'));
  const agent = https ? new HttpsAgent({ keepAlive: true, maxSockets: inFlight }) : new Agent({ keepAlive: true, maxSockets: inFlight });
  const urls = new Map(deliveries.map((delivery) => [delivery.url, new URL(delivery.url)]));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < deliveries.length) {
      const delivery = deliveries[next++] as Delivery;
      const iat = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ sid: delivery.sid, events: EVENTS })
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'logout+jwt' })
        .setIssuer(issuer)
        .setSubject(delivery.userId)
        .setAudience(delivery.clientId)
        .setIssuedAt(iat)
        .setExpirationTime(iat + 120)
        .setJti(randomBytes(32).toString('base64url'))
        .sign(privateKey);
      const status = await post(agent, urls.get(delivery.url) as URL, `logout_token=${token}`);
      if (status !== 200) throw new Error(`a receiver answered ${status}`);
    }
  };
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  try {
    await Promise.all(Array.from({ length: Math.min(inFlight, deliveries.length) }, worker));
  } finally {
    agent.destroy();
  }
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return { ms, cpuUs: cpu.user + cpu.system };
}
