/**
 * The demo application of the multi-instance example: "Sign in with the platform" with PKCE S256 (RFC 7636) and a
 * `state` bound to the browser by an HttpOnly cookie (RFC 6749 §10.12), then `iss` checked (RFC 9207) and the code
 * exchanged at the token endpoint (RFC 6749 §4.1.3).
 *
 * The pending sign-in lives in the shared Store, not in process memory: behind a round-robin proxy the callback
 * usually lands on a different instance than the one that started the sign-in.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { parse as parseCookies } from 'cookie';
import type { SentinelResponse, Store } from 'sentinel-idp';

/** What the demo application knows about itself and the service. */
export interface MultiInstanceClientOptions {
  /** The public URL of the service (the proxy's), which is also the issuer. */
  issuer: string;
  /** Where this instance reaches a token endpoint for the back-channel exchange (itself). */
  internalURL: string;
  basePath: string;
  accountId: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** The shared store; the client keeps its pending sign-ins under its own key prefix there. */
  store: Store;
  /** Shown on the pages, so that a visitor sees which instance answered. */
  instance: string;
}

/** The application's pages, as plain responses. */
export interface MultiInstanceClient {
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
 * Creates the demo application of one instance.
 * @example
 * const client = createMultiInstanceClient({ issuer, internalURL, basePath: '/sentinel', accountId, clientId,
 *   clientSecret, redirectUri: `${issuer}/callback`, store, instance: 'A' });
 */
export function createMultiInstanceClient(options: MultiInstanceClientOptions): MultiInstanceClient {
  const accountPath = `${options.basePath}/api/account/${options.accountId}`;
  const expectedIssuer = `${options.issuer}${accountPath}`;

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
<body><main><h1>${escapeHTML(title)}</h1>${content}<p><small>Answered by instance ${escapeHTML(options.instance)}.</small></p></main></body></html>`;
    return { status, headers, body };
  }

  function failure(message: string): SentinelResponse {
    return page(400, 'Sign-in failed', `<p>${escapeHTML(message)}</p><p><a href="/">Start again</a></p>`, CLEAR_FLOW);
  }

  async function exchange(code: string, verifier: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${options.internalURL}${accountPath}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: options.redirectUri,
        code_verifier: verifier,
        client_id: options.clientId,
        client_secret: options.clientSecret,
      }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  return {
    home: () =>
      page(
        200,
        'Demo application',
        '<p>This page plays the registered application.</p><p><a href="/signin">Sign in with the platform</a></p>',
      ),

    async signIn() {
      const flowId = random();
      const flow: PendingSignIn = { state: random(), verifier: random() };
      await options.store.set(flowKey(flowId), JSON.stringify(flow), FLOW_TTL_MS);
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
      // take: a pending sign-in is single use, whichever instance the callback reaches.
      const stored = flowId === undefined ? null : await options.store.take(flowKey(flowId));
      if (stored === null) return failure('No sign-in was started in this browser (or it expired).');
      const flow = JSON.parse(stored) as PendingSignIn;
      if (!sameText(query.get('state') ?? '', flow.state)) return failure('The state does not match the sign-in this browser started.');
      if (query.get('iss') !== expectedIssuer) return failure('The response does not come from the expected issuer.');
      const error = query.get('error');
      if (error !== null) return failure(`The platform answered ${error}: ${query.get('error_description') ?? ''}`);
      const code = query.get('code');
      if (code === null) return failure('The response carries no code.');
      const tokens = await exchange(code, flow.verifier);
      if (tokens.status !== 200) return failure(`The code exchange failed: ${String(tokens.body.error ?? tokens.status)}`);
      const subject = subjectOf(tokens.body.id_token) ?? 'an unknown user';
      return page(
        200,
        'Signed in',
        `<p>Signed in as <strong>${escapeHTML(subject)}</strong>. The code was exchanged by instance ${escapeHTML(options.instance)}; the tokens stay on the server.</p>`,
        CLEAR_FLOW,
      );
    },
  };
}
