/**
 * An app's side of OpenID Connect Back-Channel Logout 1.0: the endpoint registered as `backchannelLogoutUri`, which
 * takes a logout token from sentinel-idp, validates it as §2.6 asks, and ends the app's own sessions of that `sid`
 * (or of that `sub`). This is app code, not part of the package: copy it into the app and put the session lookup in
 * `onLogout`.
 *
 * Run it on its own (it prints each logout it accepts):
 *   ISSUER=https://id.example.com/sentinel/api/account/123456 CLIENT_ID=… PORT=4000 node --import tsx examples/backchannel-logout/receiver.ts
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createRemoteJWKSet, type JWTVerifyGetKey, jwtVerify } from 'jose';

/** The one event a logout token carries (§2.4). */
const BACKCHANNEL_LOGOUT = 'http://schemas.openid.net/event/backchannel-logout';
/** How far the app's clock may be from the service's, in seconds, as the service's own `clockTolerance` (5). */
const CLOCK_TOLERANCE_SECONDS = 5;

/** Where the app's receiver takes its settings from. */
export interface ReceiverOptions {
  /** The account's issuer: `{issuer}{basePath}/api/account/{accountId}` (the `iss` of its ID tokens). */
  issuer: string;
  /** The app's client id (the logout token's `aud`). */
  clientId: string;
  /** The issuer's keys; default: its `jwks_uri` (`{issuer}/jwks`), fetched and cached by jose in one key set per issuer. */
  keys?: JWTVerifyGetKey;
  /** Ends the app's sessions of `sid` (and, when the app keys them by user, of `sub`). */
  onLogout(logout: { sid?: string; sub?: string }): void | Promise<void>;
}

/**
 * The issuer's `jwks_uri` as one key set per issuer: jose caches the keys it fetched in the set, so a set made anew for
 * each token would fetch them for every token (a thousand sessions ending at once: a thousand fetches).
 */
const remoteKeySets = new Map<string, JWTVerifyGetKey>();

function remoteKeys(issuer: string): JWTVerifyGetKey {
  let keys = remoteKeySets.get(issuer);
  if (keys === undefined) {
    keys = createRemoteJWKSet(new URL(`${issuer}/jwks`));
    remoteKeySets.set(issuer, keys);
  }
  return keys;
}

/** A logout token the receiver refused, and why (the answer is `400`, and the service does not retry a 400). */
class RefusedToken extends Error {}

/** A body past the limit: answered `413`, and the connection closed so the rest of it is never read. */
class BodyTooLarge extends RefusedToken {}

/** The most characters of a body read: a logout token is well under 2 KiB, a form of one well under this. */
const MAX_BODY = 16_384;

/**
 * Validates one logout token per §2.6 and answers its `sid` and `sub`.
 *
 * @example const { sid } = await validateLogoutToken(token, options, seen);
 */
export async function validateLogoutToken(
  token: string,
  options: ReceiverOptions,
  seen: Map<string, number>,
): Promise<{ sid?: string; sub?: string }> {
  const keys = options.keys ?? remoteKeys(options.issuer);
  let payload: Record<string, unknown>;
  try {
    // Steps 1 to 4: signed by a key of the issuer, `iss`, `aud`, `iat` and `exp` (within the clocks' tolerance), and
    // the explicit type (so an ID token can never pass for a logout token).
    ({ payload } = await jwtVerify(token, keys, {
      issuer: options.issuer,
      audience: options.clientId,
      typ: 'logout+jwt',
      requiredClaims: ['iat', 'jti', 'events'],
      maxTokenAge: '2 minutes',
      // The service's clock and the app's are never the same: without a tolerance, a token signed in the first
      // moments of a second reads as issued in the future whenever the app's clock lags a little, and its 400 is
      // final (the service does not retry a refusal).
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
    }));
  } catch (error) {
    throw new RefusedToken(`logout token refused: ${(error as Error).message}`);
  }
  // Step 5: a `sid`, a `sub`, or both.
  const sid = typeof payload.sid === 'string' ? payload.sid : undefined;
  const sub = typeof payload.sub === 'string' ? payload.sub : undefined;
  if (sid === undefined && sub === undefined) throw new RefusedToken('logout token names neither sid nor sub');
  // Step 6: the `events` member, whose value is a JSON object.
  const event = (payload.events as Record<string, unknown> | undefined)?.[BACKCHANNEL_LOGOUT];
  if (typeof event !== 'object' || event === null || Array.isArray(event)) throw new RefusedToken('logout token has no logout event');
  // Step 7: never a `nonce` (what would let an ID token be replayed as a logout token).
  if ('nonce' in payload) throw new RefusedToken('logout token carries a nonce');
  // Step 8 (optional): a `jti` seen before is a replay; remembered for as long as the token is taken (its lifetime
  // and the tolerance).
  const now = Date.now();
  for (const [jti, until] of seen) if (until < now) seen.delete(jti);
  const jti = payload.jti as string;
  if (seen.has(jti)) throw new RefusedToken('logout token replayed');
  seen.set(jti, ((payload.exp as number) + CLOCK_TOLERANCE_SECONDS) * 1000);
  return { ...(sid === undefined ? {} : { sid }), ...(sub === undefined ? {} : { sub }) };
}

/**
 * The request's body, at most `limit` characters. Past it the body is dropped and no longer collected: the endpoint is
 * open to anyone, and a body kept growing after the refusal held any size in memory (past V8's longest string, about
 * 512 MiB, the append threw outside any handler and took the process down).
 */
function readBody(request: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    const collect = (chunk: string): void => {
      body += chunk;
      if (body.length <= limit) return;
      // Without a listener the stream drops what still comes; the 413's `connection: close` then ends the connection.
      request.off('data', collect);
      body = '';
      reject(new BodyTooLarge('body too large'));
    };
    request.on('data', collect);
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
}

/**
 * The receiver as a node:http server: `POST` form-encoded `logout_token=…` (§2.5); `200` once the app's sessions
 * ended, `400` for a token it refuses, `413` for a body past {@link MAX_BODY} characters (the connection closed, the
 * rest unread), `500` when `onLogout` fails (the service retries a 5xx).
 *
 * @example createLogoutReceiver({ issuer, clientId, onLogout: ({ sid }) => sessions.endBySid(sid) }).listen(4000);
 */
export function createLogoutReceiver(options: ReceiverOptions): Server {
  const seen = new Map<string, number>();
  return createServer(async (request, response) => {
    // §2.8: the answer must not be cached.
    const headers = { 'cache-control': 'no-store' };
    try {
      if (request.method !== 'POST') throw new RefusedToken('POST only');
      const token = new URLSearchParams(await readBody(request, MAX_BODY)).get('logout_token');
      if (token === null) throw new RefusedToken('no logout_token');
      await options.onLogout(await validateLogoutToken(token, options, seen));
      response.writeHead(200, headers).end();
    } catch (error) {
      const refused = error instanceof RefusedToken;
      const tooLarge = error instanceof BodyTooLarge;
      const status = tooLarge ? 413 : refused ? 400 : 500;
      response.writeHead(status, { ...headers, 'content-type': 'application/json', ...(tooLarge ? { connection: 'close' } : {}) });
      response.end(JSON.stringify({ error: refused ? 'invalid_request' : 'server_error' }));
    }
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const issuer = process.env.ISSUER;
  const clientId = process.env.CLIENT_ID;
  if (issuer === undefined || clientId === undefined) {
    console.error('set ISSUER and CLIENT_ID');
    process.exit(2);
  }
  const port = Number(process.env.PORT ?? 4000);
  createLogoutReceiver({ issuer, clientId, onLogout: (logout) => console.log('signed out', logout) }).listen(port, () =>
    console.log(`back-channel logout receiver on http://localhost:${port}/`),
  );
}
