/**
 * The examples' tiny relying party: "Sign in with the platform" starts the authorization code flow with PKCE S256
 * (RFC 7636) and a `state` bound to this browser by an HttpOnly cookie (RFC 6749 §10.12); `/callback` checks
 * `state` and `iss` (RFC 9207), exchanges the code at the token endpoint (RFC 6749 §4.1.3) and shows who signed in.
 * No JavaScript on the pages; every answer is a plain response object each framework writes as is.
 *
 * Pending sign-ins live in a sentinel-idp `Store`: a bounded MemoryStore for one process, or the shared RedisStore
 * when several instances sit behind a proxy and the callback may reach another instance than the one that started it.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { parse as parseCookies } from 'cookie';
import { MemoryStore, type SentinelResponse, type Store } from 'sentinel-idp';

/** What the demo application knows about itself and the service. */
export interface DemoClientOptions {
  /** The public URL of the service, which is also its issuer. */
  issuer: string;
  /** Where this process reaches the token endpoint for the back-channel exchange. */
  internalURL: string;
  /** The service's base path (default `/sentinel`). */
  basePath?: string;
  accountId: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Where pending sign-ins are kept (default: a MemoryStore of at most 1000 entries). */
  store?: Store;
  /** Shown on every page, so that a visitor sees which instance answered (multi-instance example). */
  instance?: string;
}

/** The client's three pages. */
export interface DemoClient {
  home(): SentinelResponse;
  signIn(): Promise<SentinelResponse>;
  callback(query: URLSearchParams, cookieHeader: string | undefined): Promise<SentinelResponse>;
}

interface PendingSignIn {
  state: string;
  verifier: string;
}

const FLOW_COOKIE = 'demo_flow';
const FLOW_TTL_MS = 10 * 60 * 1000;
const CLEAR_FLOW = `${FLOW_COOKIE}=; Path=/callback; HttpOnly; SameSite=Lax; Max-Age=0`;
const random = (): string => randomBytes(32).toString('base64url');
/** The flow id is a bearer secret (the cookie); like the service, keep only its digest in store keys. */
const flowKey = (flowId: string): string => `demo-flow:${createHash('sha256').update(flowId).digest('base64url')}`;

function escapeHTML(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The `sub` of an ID token received straight from the token endpoint (OIDC Core §3.1.3.7 allows TLS in place of a signature check). */
function subjectOf(idToken: unknown): string | null {
  if (typeof idToken !== 'string') return null;
  try {
    const claims = JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: unknown };
    return typeof claims.sub === 'string' ? claims.sub : null;
  } catch {
    return null;
  }
}

/**
 * Creates the demo client.
 * @example const client = createDemoClient(demo); app.get('/', (req, res) => sendSentinelResponse(res, client.home()));
 */
export function createDemoClient(options: DemoClientOptions): DemoClient {
  const store = options.store ?? new MemoryStore({ max: 1000 });
  const accountPath = `${options.basePath ?? '/sentinel'}/api/account/${options.accountId}`;
  const expectedIssuer = `${options.issuer}${accountPath}`;
  const footer = options.instance === undefined ? '' : `<p><small>Answered by instance ${escapeHTML(options.instance)}.</small></p>`;

  function page(status: number, title: string, content: string, cookie?: string): SentinelResponse {
    const headers: Record<string, string> = {
      'content-type': 'text/html;charset=UTF-8',
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    };
    if (cookie !== undefined) headers['set-cookie'] = cookie;
    const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHTML(title)}</title></head>
<body><main><h1>${escapeHTML(title)}</h1>${content}${footer}</main></body></html>`;
    return { status, headers, body };
  }

  function failure(message: string): SentinelResponse {
    return page(400, 'Sign-in failed', `<p>${escapeHTML(message)}</p><p><a href="/">Start again</a></p>`, CLEAR_FLOW);
  }

  async function exchange(code: string, verifier: string): Promise<Record<string, unknown> & { status: number }> {
    const response = await fetch(`${options.internalURL}${accountPath}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded;charset=UTF-8',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: options.redirectUri, code_verifier: verifier }),
    });
    return { status: response.status, ...((await response.json()) as Record<string, unknown>) };
  }

  return {
    home: () =>
      page(200, 'Demo client', `<p>This page plays the registered application.</p><p><a href="/signin">Sign in with the platform</a></p>`),

    async signIn() {
      const flowId = random();
      const flow: PendingSignIn = { state: random(), verifier: random() };
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
          'set-cookie': `${FLOW_COOKIE}=${flowId}; Path=/callback; HttpOnly; SameSite=Lax; Max-Age=600`,
        },
      };
    },

    async callback(query, cookieHeader) {
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
      const tokens = await exchange(code, flow.verifier);
      if (tokens.status !== 200) return failure(`The code exchange failed (${tokens.status} ${String(tokens.error)}).`);
      const subject = subjectOf(tokens.id_token) ?? 'unknown';
      const content = `<p>Signed in as <strong id="subject">${escapeHTML(subject)}</strong>.</p>
<p>Access token received (expires in ${escapeHTML(String(tokens.expires_in))} s)${tokens.refresh_token === undefined ? '' : ', with a refresh token'}.</p>
<form method="post" action="${escapeHTML(accountPath)}/logout"><input type="hidden" name="client_id" value="${escapeHTML(options.clientId)}"><button type="submit">Sign out</button></form>
<p><a href="/">Home</a></p>`;
      return page(200, 'Signed in', content, CLEAR_FLOW);
    },
  };
}
