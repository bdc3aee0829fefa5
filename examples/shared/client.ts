/**
 * The examples' relying party, one handler for every framework: it has the service's shape (`config` and
 * `handle()`), so the three example servers mount it with the same adapter line as the service
 * (`app.use(toExpress(client))`), and its pages are the same everywhere.
 *
 * "Sign in with the platform" starts the authorization code flow with PKCE S256 (RFC 7636) and a `state` bound to
 * this browser by an HttpOnly cookie (RFC 6749 §10.12); `/callback` checks `state` and `iss` (RFC 9207), exchanges
 * the code (RFC 6749 §4.1.3), keeps the tokens in the app's own session and shows who signed in and the tokens'
 * claims. The buttons post, with the session's CSRF token, to `/demo/*`: each calls the service or the platform's
 * API as an application would and the page then shows what came back (post/redirect/get). Sign-out is
 * RP-initiated logout at the service's end_session endpoint, back to `/signed-out`.
 *
 * Pending sign-ins and sessions live in a sentinel-idp `Store`: a bounded MemoryStore for one process, or the shared
 * RedisStore when several instances sit behind a proxy and the callback may reach another instance.
 */
import { createHash } from 'node:crypto';
import { parse as parseCookies } from 'cookie';
import { MemoryStore, type Sentinel, type SentinelRequest, type SentinelResponse, type Store } from 'sentinel-idp';
import { decodeClaims } from './claims.js';
import { type Answer, createServiceCalls } from './service-calls.js';
import { type ActionResult, createDemoSessions, type DemoSession, randomValue, sameText } from './session.js';
import { type DemoLinks, failureView, homeView, signedInView, signedOutView, type ViewContext } from './views.js';

/** What the demo application knows about itself and the service. */
export interface DemoClientOptions {
  /** The service: its base path, and its body limit for the adapters. */
  sentinel: Pick<Sentinel, 'config'>;
  /** The public URL of the service, which is also its issuer. */
  issuer: string;
  /** Where this process reaches the service for back-channel calls. */
  internalURL: string;
  accountId: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Registered as the app's `postLogoutRedirectUris`: `{issuer}/signed-out`. */
  postLogoutRedirectUri: string;
  /** The consumer the "consumer-bound token" button asks for. */
  consumerId: string;
  /** The account page and the console, when this server has them. */
  links?: Partial<DemoLinks> | undefined;
  /** Where pending sign-ins and sessions are kept (default: a MemoryStore of at most 1000 entries). */
  store?: Store;
  /** Shown on every page, so that a visitor sees which instance answered (multi-instance example). */
  instance?: string;
}

/** The demo application: mount it like the service (`app.use(toExpress(client))`). */
export interface DemoClient {
  /** The service's configuration with an empty base path: the client's pages live at the root. */
  readonly config: Sentinel['config'];
  /** Answers `/`, `/signin`, `/callback`, `/signed-out` and the POSTs to `/demo/*`; `null` for any other path. */
  handle(request: SentinelRequest): Promise<SentinelResponse | null>;
}

interface PendingSignIn {
  state: string;
  verifier: string;
}

const FLOW_COOKIE = 'demo_flow';
const FLOW_TTL_MS = 10 * 60 * 1000;
const ACTIONS = new Set(['brand-tokens', 'app-token', 'refresh', 'revoke']);
/** The flow id is a bearer secret (the cookie); like the service, keep only its digest in store keys. */
const flowKey = (flowId: string): string => `demo-flow:${createHash('sha256').update(flowId).digest('base64url')}`;

function header(request: SentinelRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The form of a POST, whatever shape the adapter handed it over in. */
async function readForm(request: SentinelRequest): Promise<URLSearchParams> {
  const body = typeof request.body === 'function' ? await request.body() : request.body;
  if (body === undefined) return new URLSearchParams();
  if (typeof body === 'string') return new URLSearchParams(body);
  if (body instanceof Uint8Array) return new URLSearchParams(Buffer.from(body).toString('utf8'));
  return new URLSearchParams(Object.entries(body).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/** An answer as the panel shows it: status, challenge, JSON. Token values are cut to their first characters. */
function exchangeText(request: string, answer: Answer): string {
  const body = Object.fromEntries(
    Object.entries(answer.body).map(([name, value]) =>
      /token$/.test(name) && typeof value === 'string' ? [name, `${value.slice(0, 12)}… (${value.length} characters)`] : [name, value],
    ),
  );
  const challenge = answer.challenge === null ? '' : `\nWWW-Authenticate: ${answer.challenge}`;
  return `${request}\n\nHTTP ${answer.status}${challenge}\n${JSON.stringify(body, null, 2)}`;
}

/**
 * Creates the demo application.
 * @example const client = createDemoClient({ sentinel, issuer, internalURL, accountId, clientId, clientSecret, redirectUri, postLogoutRedirectUri, consumerId }); app.use(toExpress(client));
 */
export function createDemoClient(options: DemoClientOptions): DemoClient {
  const store = options.store ?? new MemoryStore({ max: 1000 });
  const basePath = options.sentinel.config.basePath;
  const accountPath = `${basePath}/api/account/${options.accountId}`;
  const expectedIssuer = `${options.issuer}${accountPath}`;
  const secure = options.issuer.startsWith('https:');
  const sessions = createDemoSessions(store, secure);
  // The flow cookie binds `state` to this browser: over https it must not travel in clear either, like the session's.
  const flowAttributes = `Path=/callback; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  const clearFlow = `${FLOW_COOKIE}=; ${flowAttributes}; Max-Age=0`;
  // The options themselves, not a copy: the multi-instance example's internalURL is a getter, known once listening.
  const calls = createServiceCalls(options, { basePath, accountPath });
  const view: ViewContext = {
    links: { discovery: `${expectedIssuer}/.well-known/openid-configuration`, ...options.links },
    accountId: options.accountId,
    consumerId: options.consumerId,
    clientId: options.clientId,
    endSession: `${accountPath}/end_session`,
    postLogoutRedirectUri: options.postLogoutRedirectUri,
    footer: options.instance === undefined ? undefined : `Answered by instance ${options.instance}.`,
  };
  const failure = (message: string): SentinelResponse => failureView(view, 400, 'Sign-in failed', message, { 'set-cookie': clearFlow });

  async function signIn(): Promise<SentinelResponse> {
    const flowId = randomValue();
    const flow: PendingSignIn = { state: randomValue(), verifier: randomValue() };
    await store.set(flowKey(flowId), JSON.stringify(flow), FLOW_TTL_MS);
    const query = new URLSearchParams({
      v: '1.0',
      response_type: 'code',
      client_id: options.clientId,
      redirect_uri: options.redirectUri,
      scope: 'openid',
      state: flow.state,
      code_challenge: createHash('sha256').update(flow.verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    return {
      status: 302,
      headers: {
        location: `${options.issuer}${accountPath}/authorize?${query}`,
        'cache-control': 'no-store',
        'set-cookie': `${FLOW_COOKIE}=${flowId}; ${flowAttributes}; Max-Age=600`,
      },
    };
  }

  async function callback(query: URLSearchParams, cookieHeader: string | undefined): Promise<SentinelResponse> {
    const flowId = parseCookies(cookieHeader ?? '')[FLOW_COOKIE];
    // take: a pending sign-in is single use, whatever happens next and whichever instance the callback reaches.
    const stored = flowId === undefined ? null : await store.take(flowKey(flowId));
    if (stored === null) return failure('No sign-in was started in this browser (or it expired).');
    const flow = JSON.parse(stored) as PendingSignIn;
    if (!sameText(query.get('state') ?? '', flow.state)) return failure('The state does not match the sign-in this browser started.');
    if (query.get('iss') !== expectedIssuer) return failure('The response does not come from the expected issuer.');
    const error = query.get('error');
    if (error !== null) return failure(`The platform answered ${error}: ${query.get('error_description') ?? ''}`);
    const code = query.get('code');
    if (code === null) return failure('The response carries no code.');
    const tokens = await calls.token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: options.redirectUri,
      code_verifier: flow.verifier,
    });
    const { access_token: accessToken, id_token: idToken, refresh_token: refreshToken } = tokens.body;
    if (tokens.status !== 200 || typeof accessToken !== 'string' || typeof idToken !== 'string')
      return failure(`The code exchange failed (${tokens.status} ${String(tokens.body.error)}).`);
    const subject = decodeClaims(idToken)?.sub;
    const session: DemoSession = {
      userId: typeof subject === 'string' ? subject : 'unknown',
      csrf: randomValue(),
      logoutState: randomValue(),
      idToken,
      accessToken,
      refreshToken: typeof refreshToken === 'string' ? refreshToken : undefined,
    };
    const exchanged: ActionResult = {
      title: 'The code was exchanged',
      ok: true,
      lines: [
        `Access token received (expires in ${String(tokens.body.expires_in)} s)${typeof refreshToken === 'string' ? ', with a refresh token' : ''} and an ID token.`,
        'The application keeps them on its server; the browser holds only a session cookie.',
      ],
    };
    const cookie = await sessions.start(session);
    // Shown on this page only; the stored session starts without it.
    return signedInView(view, { ...session, result: exchanged }, { 'set-cookie': [clearFlow, cookie] });
  }

  async function brandTokens(session: DemoSession): Promise<ActionResult> {
    const consumerBound = session.consumerToken !== undefined;
    const answer = await calls.brandTokens(options.consumerId, session.consumerToken ?? session.accessToken);
    const request = `GET /api/account/${options.accountId}/consumer/${options.consumerId}/brand/tokens\nAuthorization: Bearer <${consumerBound ? 'the consumer-bound token' : 'the access token'}>`;
    const lines =
      answer.status === 200
        ? [`The API accepted the consumer-bound token and answered the brand tokens of consumer ${options.consumerId}.`]
        : consumerBound
          ? ['The API refused the consumer-bound token (it may have expired): get a new one.']
          : [
              'The API refused the signed-in user’s access token: it accepts only a token bound to the consumer in its path.',
              'Get a consumer-bound token, then call it again.',
            ];
    return {
      title: `The brand-tokens API answered ${answer.status}`,
      ok: answer.status === 200,
      lines,
      exchange: exchangeText(request, answer),
    };
  }

  async function appToken(session: DemoSession): Promise<ActionResult> {
    const answer = await calls.appToken(options.consumerId);
    const request = `POST ${basePath}/api/v2/account/${options.accountId}/app/token?state=${options.consumerId}\ngrant_type=client_credentials (client id and secret in HTTP Basic)`;
    if (answer.status === 200 && typeof answer.body.access_token === 'string') session.consumerToken = answer.body.access_token;
    const lines =
      answer.status === 200
        ? [
            `A token bound to consumer ${options.consumerId} (its sub), for this app: its claims are below. Call the brand-tokens API with it.`,
          ]
        : ['The service refused the app token request.'];
    return {
      title: `The app-token endpoint answered ${answer.status}`,
      ok: answer.status === 200,
      lines,
      exchange: exchangeText(request, answer),
    };
  }

  async function refresh(session: DemoSession): Promise<ActionResult> {
    if (session.refreshToken === undefined)
      return { title: 'No refresh token', ok: false, lines: ['The service issued no refresh token for this sign-in.'] };
    const answer = await calls.token({ grant_type: 'refresh_token', refresh_token: session.refreshToken });
    const request = `POST ${accountPath}/token\ngrant_type=refresh_token&refresh_token=<the refresh token>`;
    const { access_token: accessToken, id_token: idToken, refresh_token: refreshToken } = answer.body;
    if (answer.status !== 200 || typeof accessToken !== 'string')
      return {
        title: `The token endpoint answered ${answer.status}`,
        ok: false,
        lines: ['The service refused the refresh token: the grant was revoked or has expired. Sign out and in again for a new one.'],
        exchange: exchangeText(request, answer),
      };
    const before = decodeClaims(session.accessToken)?.jti;
    session.accessToken = accessToken;
    if (typeof idToken === 'string') session.idToken = idToken;
    if (typeof refreshToken === 'string') session.refreshToken = refreshToken;
    return {
      title: 'The tokens were refreshed',
      ok: true,
      lines: [
        `A new access token (jti ${String(decodeClaims(accessToken)?.jti)}, was ${String(before)}) and a new ID token.`,
        'The refresh token was rotated: the old one is spent, and presenting it again would end the whole grant.',
      ],
      exchange: exchangeText(request, answer),
    };
  }

  async function revoke(session: DemoSession): Promise<ActionResult> {
    const [token, hint] =
      session.refreshToken === undefined
        ? [session.accessToken, 'access_token' as const]
        : [session.refreshToken, 'refresh_token' as const];
    const revoked = await calls.revoke(token, hint);
    const after = await calls.introspect(session.accessToken);
    const request = `POST ${accountPath}/token/revoke\ntoken=<the ${hint.replace('_', ' ')}>&token_type_hint=${hint}`;
    return {
      title: `The revocation endpoint answered ${revoked.status}`,
      ok: revoked.status === 200 && after.body.active === false,
      lines: [
        `The ${hint.replace('_', ' ')} was revoked, and with it the grant.`,
        `Introspection of the access token now answers active: ${String(after.body.active)}; refreshing is refused from now on.`,
      ],
      exchange: `${exchangeText(request, revoked)}\n\nPOST ${accountPath}/token/introspect\ntoken=<the access token>\n\nHTTP ${after.status}\n${JSON.stringify(after.body)}`,
    };
  }

  const run: Record<string, (session: DemoSession) => Promise<ActionResult>> = {
    'brand-tokens': brandTokens,
    'app-token': appToken,
    refresh,
    revoke,
  };

  async function action(request: SentinelRequest, name: string): Promise<SentinelResponse> {
    const found = await sessions.read(header(request, 'cookie'));
    const refused = (message: string): SentinelResponse => failureView(view, 403, 'Refused', message);
    if (found === null) return refused('This browser is not signed in to the demo application (or its session expired).');
    // Defence in depth beside the token: a browser that says the form came from another site is refused outright.
    const site = header(request, 'sec-fetch-site');
    if (site !== undefined && site !== 'same-origin') return refused('The form did not come from the demo application’s own pages.');
    let form: URLSearchParams;
    try {
      form = await readForm(request);
    } catch {
      return failureView(view, 400, 'Refused', 'The form could not be read.');
    }
    if (!sameText(form.get('csrf') ?? '', found.session.csrf))
      return refused('The form did not come from the demo application’s own pages.');
    const { session } = found;
    session.result = await (run[name] as (session: DemoSession) => Promise<ActionResult>)(session);
    await sessions.save(found.id, session);
    return { status: 303, headers: { location: '/#result', 'cache-control': 'no-store' } };
  }

  async function home(request: SentinelRequest): Promise<SentinelResponse> {
    const found = await sessions.read(header(request, 'cookie'));
    if (found === null) return homeView(view);
    const { session } = found;
    const page = signedInView(view, session);
    if (session.result !== undefined) {
      // Shown once: a reload shows the page without it.
      session.result = undefined;
      await sessions.save(found.id, session);
    }
    return page;
  }

  async function signedOut(request: SentinelRequest): Promise<SentinelResponse> {
    const found = await sessions.read(header(request, 'cookie'));
    if (found === null) return signedOutView(view, {});
    // The state proves the service sent back the logout this session started; anything else leaves it alone.
    if (!sameText(request.query.get('state') ?? '', found.session.logoutState))
      return failureView(
        view,
        400,
        'Sign-out not recognised',
        'This sign-out was not started by this browser’s session; it is still signed in.',
      );
    return signedOutView(view, { 'set-cookie': await sessions.end(found.id) });
  }

  return {
    config: { ...options.sentinel.config, basePath: '' },
    async handle(request) {
      const { method, path } = request;
      if (method === 'GET') {
        if (path === '/') return home(request);
        if (path === '/signin') return signIn();
        if (path === '/callback') return callback(request.query, header(request, 'cookie'));
        if (path === '/signed-out') return signedOut(request);
        return null;
      }
      const name = path.startsWith('/demo/') ? path.slice('/demo/'.length) : '';
      if (method === 'POST' && ACTIONS.has(name)) return action(request, name);
      return null;
    },
  };
}
