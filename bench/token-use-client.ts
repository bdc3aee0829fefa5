/**
 * The load-generator side of the token-use rows: what autocannon sends for UserInfo, introspection (RFC 7662) and
 * delegation (RFC 8693), each request presenting the next token of the round's pool (bench/token-pools.ts), and the
 * thorough check of a first answer — with, for each, a refusal of an altered token, so that no row is fast by not
 * checking.
 */
import type { AutocannonOptions } from 'autocannon';
import { decodeJwt, importJWK, type JWK, jwtVerify } from 'jose';
import {
  ACCESS_TOKEN_TYPE,
  ACCOUNT_ID,
  ACCOUNT_TOKEN_PATH,
  BOT_CLIENT_ID,
  checkTimeout,
  CLIENT_ID,
  CLIENT_SECRET,
  CONSUMER_ID,
  FORM_CONTENT_TYPE,
  HOST,
  TOKEN_EXCHANGE_GRANT,
  USER_ID,
} from './fixtures.js';

/** Tokens of one server (bench/token-pools.ts), presented in turn, and where the next request starts. */
export interface TokenPool {
  tokens: string[];
  next: number;
}

/** The token-use workloads; the `oidc-` ones speak to oidc-provider's endpoints. */
export type TokenUseWorkload = 'userinfo' | 'oidc-userinfo' | 'introspect' | 'oidc-introspect' | 'delegation';

const TOKEN_USE: ReadonlySet<string> = new Set(['userinfo', 'oidc-userinfo', 'introspect', 'oidc-introspect', 'delegation']);

export function isTokenUse(workload: string): workload is TokenUseWorkload {
  return TOKEN_USE.has(workload);
}

const USERINFO_PATH = { userinfo: `/sentinel/api/account/${ACCOUNT_ID}/userinfo`, 'oidc-userinfo': '/me' } as const;
const INTROSPECT_PATH = {
  introspect: `/sentinel/api/account/${ACCOUNT_ID}/token/introspect`,
  'oidc-introspect': '/token/introspection',
} as const;

/** What one request of the workload sends with `token` (the path, headers and body autocannon needs). */
function requestFor(
  workload: TokenUseWorkload,
  token: string,
): { method: string; path: string; headers: Record<string, string>; body?: string } {
  switch (workload) {
    case 'userinfo':
    case 'oidc-userinfo':
      return { method: 'GET', path: USERINFO_PATH[workload], headers: { authorization: `Bearer ${token}` } };
    case 'introspect':
    case 'oidc-introspect':
      return {
        method: 'POST',
        path: INTROSPECT_PATH[workload],
        headers: { 'content-type': FORM_CONTENT_TYPE },
        // client_secret_post, as both servers' clients authenticate at the token endpoint.
        body: new URLSearchParams({
          token,
          token_type_hint: 'access_token',
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
        }).toString(),
      };
    case 'delegation':
      return {
        method: 'POST',
        path: ACCOUNT_TOKEN_PATH,
        headers: { 'content-type': FORM_CONTENT_TYPE },
        body: new URLSearchParams({
          grant_type: TOKEN_EXCHANGE_GRANT,
          subject_token: token,
          subject_token_type: ACCESS_TOKEN_TYPE,
          client_id: BOT_CLIENT_ID,
          client_secret: CLIENT_SECRET,
        }).toString(),
      };
  }
}

/** autocannon options of a token-use workload (without duration): the pool's tokens in turn. */
export function tokenUseOptions(
  workload: TokenUseWorkload,
  pool: TokenPool | undefined,
  common: { url: string; connections: number; pipelining: number; timeout: number },
): AutocannonOptions {
  if (pool === undefined) throw new Error(`${workload} rows need a token pool (bench/token-pools.ts)`);
  return {
    ...common,
    requests: [
      {
        method: workload.endsWith('userinfo') ? 'GET' : 'POST',
        setupRequest: (request) => ({ ...request, ...requestFor(workload, pool.tokens[pool.next++ % pool.tokens.length] as string) }),
      },
    ],
  };
}

async function send(port: number, workload: TokenUseWorkload, token: string): Promise<{ status: number; headers: Headers; text: string }> {
  const request = requestFor(workload, token);
  const response = await fetch(`http://${HOST}:${port}${request.path}`, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal: checkTimeout(),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** A JSON answer of `status` with Cache-Control: no-store, parsed. */
function jsonAnswer(answer: { status: number; headers: Headers; text: string }, status: number, what: string): Record<string, unknown> {
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status} ${answer.text.slice(0, 200)}`);
  const contentType = answer.headers.get('content-type') ?? '';
  if (!/^application\/json/i.test(contentType)) throw new Error(`${what}: content-type ${contentType}`);
  if (!/no-store/i.test(answer.headers.get('cache-control') ?? '')) throw new Error(`${what}: no Cache-Control: no-store`);
  return JSON.parse(answer.text) as Record<string, unknown>;
}

/**
 * The token with one character in its middle changed: a JWT's payload no longer matches its signature, an opaque
 * token names nothing the server issued.
 */
function altered(token: string): string {
  const at = token.length >> 1;
  return `${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}`;
}

/** Sends the pool's first token and checks the answer thoroughly, then an altered token's refusal. One line back. */
export async function checkTokenUse(
  workload: TokenUseWorkload,
  port: number,
  pool: TokenPool | undefined,
  publicJwk: JWK,
): Promise<string> {
  if (pool === undefined || pool.tokens.length === 0) throw new Error(`${workload}: no tokens`);
  const token = pool.tokens[0] as string;
  const first = await send(port, workload, token);
  const refusal = await send(port, workload, altered(token));
  const tokens = `${pool.tokens.length} tokens in turn`;
  switch (workload) {
    case 'userinfo':
    case 'oidc-userinfo': {
      const body = jsonAnswer(first, 200, 'first UserInfo');
      if (body.sub !== USER_ID) throw new Error(`UserInfo sub ${String(body.sub)}, expected ${USER_ID}`);
      if (refusal.status !== 401 || !/invalid_token/.test(refusal.headers.get('www-authenticate') ?? '')) {
        throw new Error(`UserInfo with an altered token: ${refusal.status} ${refusal.headers.get('www-authenticate') ?? ''}`);
      }
      return `200 {${Object.keys(body).sort().join(',')}}, sub the user; an altered token 401 invalid_token (${tokens})`;
    }
    case 'introspect':
    case 'oidc-introspect': {
      const body = jsonAnswer(first, 200, 'first introspection');
      const problems: string[] = [];
      if (body.active !== true) problems.push(`active ${String(body.active)}`);
      if (body.client_id !== CLIENT_ID) problems.push(`client_id ${String(body.client_id)}`);
      if (body.sub !== USER_ID) problems.push(`sub ${String(body.sub)}`);
      if (typeof body.exp !== 'number' || body.exp <= Date.now() / 1000) problems.push(`exp ${String(body.exp)}`);
      if (
        !String(body.scope ?? '')
          .split(' ')
          .includes('openid')
      )
        problems.push(`scope ${String(body.scope)}`);
      if (problems.length > 0) throw new Error(`introspection answered ${problems.join(', ')}`);
      const inactive = jsonAnswer(refusal, 200, 'introspection of an altered token');
      if (inactive.active !== false || Object.keys(inactive).length !== 1)
        throw new Error(`altered token introspected as ${refusal.text.slice(0, 200)}`);
      return `200 active: true {${Object.keys(body).sort().join(',')}}; an altered token {"active":false} (${tokens})`;
    }
    case 'delegation': {
      const body = jsonAnswer(first, 200, 'first delegation');
      if (body.issued_token_type !== ACCESS_TOKEN_TYPE) throw new Error(`issued_token_type ${String(body.issued_token_type)}`);
      if (String(body.token_type).toLowerCase() !== 'bearer') throw new Error(`token_type ${String(body.token_type)}`);
      const key = await importJWK(publicJwk, 'ES256');
      const { payload } = await jwtVerify(String(body.access_token), key, { algorithms: ['ES256'], typ: 'at+jwt' });
      const subject = decodeJwt(token);
      const act = payload.act as { sub?: unknown; act?: unknown } | undefined;
      const problems: string[] = [];
      if (act?.sub !== BOT_CLIENT_ID || act.act !== undefined) problems.push(`act ${JSON.stringify(payload.act)}`);
      if (payload.sub !== CONSUMER_ID) problems.push(`sub ${String(payload.sub)}`);
      if (payload.client_id !== BOT_CLIENT_ID) problems.push(`client_id ${String(payload.client_id)}`);
      if (JSON.stringify(payload.aud) !== JSON.stringify(subject.aud)) problems.push(`aud ${String(payload.aud)}`);
      if (payload.iss !== subject.iss) problems.push(`iss ${String(payload.iss)}`);
      if (typeof payload.exp !== 'number' || payload.exp > (subject.exp as number)) problems.push('exp after the subject token');
      if (typeof payload.jti !== 'string' || payload.jti === subject.jti) problems.push('jti missing or the subject token');
      if (typeof body.expires_in !== 'number') problems.push(`expires_in ${JSON.stringify(body.expires_in)}`);
      if (problems.length > 0) throw new Error(`delegated token: ${problems.join(', ')}`);
      const refused = jsonAnswer(refusal, 400, 'delegation of an altered token');
      if (refused.error !== 'invalid_request') throw new Error(`altered subject token refused with ${String(refused.error)}`);
      return `200 ${String(body.issued_token_type).split(':').pop()}, ES256 at+jwt (${Object.keys(payload).sort().join(',')}), act the bot, sub the consumer, exp ≤ the subject's; an altered subject token 400 invalid_request (${tokens})`;
    }
  }
}
