/**
 * The examples' tiny relying party: "Sign in with the platform" starts the authorization code flow with PKCE S256
 * (RFC 7636) and a `state` bound to this browser by an HttpOnly cookie (RFC 6749 §10.12); `/callback` checks
 * `state` and `iss` (RFC 9207), exchanges the code at the token endpoint (RFC 6749 §4.1.3) and shows who signed in.
 * No JavaScript on the pages; every answer is a plain response object each framework writes as is.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { parse as parseCookies } from 'cookie';
import type { SentinelResponse } from 'sentinel-idp';
import type { Demo } from './demo.js';

/** The client's three pages. */
export interface DemoClient {
  home(): SentinelResponse;
  signIn(): SentinelResponse;
  callback(query: URLSearchParams, cookieHeader: string | undefined): Promise<SentinelResponse>;
}

interface PendingFlow {
  state: string;
  verifier: string;
  createdAt: number;
}

const FLOW_COOKIE = 'demo_flow';
const FLOW_TTL_MS = 10 * 60 * 1000;
const MAX_FLOWS = 1000;
const random = (): string => randomBytes(32).toString('base64url');

function escapeHTML(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

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
<body><main><h1>${escapeHTML(title)}</h1>${content}</main></body></html>`;
  return { status, headers, body };
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
 * Creates the demo client for one demo setup.
 * @example const client = createDemoClient(demo); app.get('/', (req, res) => send(res, client.home()));
 */
export function createDemoClient(demo: Demo): DemoClient {
  const flows = new Map<string, PendingFlow>();
  const basePath = demo.sentinel.config.basePath;
  const accountPath = `${basePath}/api/account/${demo.accountId}`;
  const expectedIssuer = `${demo.issuer}${accountPath}`;
  const clearFlow = `${FLOW_COOKIE}=; Path=/callback; HttpOnly; SameSite=Lax; Max-Age=0`;

  function remember(flowId: string, flow: PendingFlow): void {
    for (const [id, old] of flows) {
      if (flows.size < MAX_FLOWS && Date.now() - old.createdAt < FLOW_TTL_MS) break;
      flows.delete(id); // Map order is insertion order: the oldest go first, so the map stays bounded.
    }
    flows.set(flowId, flow);
  }

  async function exchange(code: string, verifier: string): Promise<Record<string, unknown> & { status: number }> {
    const response = await fetch(`${demo.internalURL}${accountPath}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded;charset=UTF-8',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(demo.clientId)}:${encodeURIComponent(demo.clientSecret)}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: demo.redirectUri, code_verifier: verifier }),
    });
    return { status: response.status, ...((await response.json()) as Record<string, unknown>) };
  }

  function failure(message: string): SentinelResponse {
    return page(400, 'Sign-in failed', `<p>${escapeHTML(message)}</p><p><a href="/">Start again</a></p>`, clearFlow);
  }

  return {
    home: () =>
      page(200, 'Demo client', `<p>This page plays the registered application.</p><p><a href="/signin">Sign in with the platform</a></p>`),

    signIn() {
      const flowId = random();
      const flow = { state: random(), verifier: random(), createdAt: Date.now() };
      remember(flowId, flow);
      const query = new URLSearchParams({
        v: '1.0',
        response_type: 'code',
        client_id: demo.clientId,
        redirect_uri: demo.redirectUri,
        scope: 'openid',
        state: flow.state,
        code_challenge: createHash('sha256').update(flow.verifier).digest('base64url'),
        code_challenge_method: 'S256',
      });
      return {
        status: 302,
        headers: {
          location: `${demo.issuer}${accountPath}/authorize?${query}`,
          'cache-control': 'no-store',
          'set-cookie': `${FLOW_COOKIE}=${flowId}; Path=/callback; HttpOnly; SameSite=Lax; Max-Age=600`,
        },
      };
    },

    async callback(query, cookieHeader) {
      const flowId = parseCookies(cookieHeader ?? '')[FLOW_COOKIE];
      const flow = flowId === undefined ? undefined : flows.get(flowId);
      if (flowId !== undefined) flows.delete(flowId); // single use, whatever happens next
      if (flow === undefined || Date.now() - flow.createdAt > FLOW_TTL_MS)
        return failure('No sign-in was started in this browser (or it expired).');
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
<form method="post" action="${escapeHTML(accountPath)}/logout"><input type="hidden" name="client_id" value="${escapeHTML(demo.clientId)}"><button type="submit">Sign out</button></form>
<p><a href="/">Home</a></p>`;
      return page(200, 'Signed in', content, clearFlow);
    },
  };
}
