/**
 * What the security-state hardening suites share: a flood of token and PAR requests for the public client, each
 * with a fresh self-made DPoP proof (all the caller needs is the public client_id), and a whole legitimate sign-in
 * afterwards — PAR with DPoP, password, TOTP, and a DPoP-bound code exchange — that must still work.
 */
import { randomBytes } from 'node:crypto';
import { generate } from 'otplib';
import { expect } from 'vitest';
import type { Sentinel, SentinelResponse } from '../../src/index.js';
import {
  ACCOUNT_PATH,
  authorizeQuery,
  call,
  csrfOf,
  jsonOf,
  LOGIN_PATH,
  openLogin,
  postForm,
  postLogin,
  stepCookie,
  startInteraction,
  TOKEN_PATH,
} from './direct-flow.js';
import { PASSWORD, PUBLIC_CLIENT_ID, REDIRECT_URI, USER_ID, USERNAME } from './fixtures.js';
import { pkcePair } from './pkce.js';
import { clientKey, dpopProof, type ClientKey } from './key-bound.js';

export const PAR_PATH = `${ACCOUNT_PATH}/par`;
export const PAR_HTU = `http://localhost${PAR_PATH}`;
export const TOKEN_HTU = `http://localhost${TOKEN_PATH}`;
const TOTP_PATH = `${LOGIN_PATH}/totp`;

/** A users hook whose one user signs in with a password and then a TOTP code of `secret`. */
export function totpUsers(secret: string) {
  return {
    authenticate: async ({ username, password }: { username: string; password: string }) =>
      username === USERNAME && password === PASSWORD ? { id: USER_ID, secondFactor: 'totp' as const } : null,
    totpSecret: async ({ userId }: { userId: string }) => (userId === USER_ID ? secret : null),
  };
}

/** One flood request: a token request with a made-up code, or a valid push; either with a fresh proof. */
export async function floodRequest(sentinel: Sentinel, key: ClientKey, kind: 'token' | 'par', ip: string): Promise<SentinelResponse> {
  if (kind === 'token') {
    const proof = await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU });
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: PUBLIC_CLIENT_ID,
      code: randomBytes(32).toString('base64url'),
      code_verifier: randomBytes(32).toString('base64url'),
      redirect_uri: REDIRECT_URI,
    });
    return postForm(sentinel, TOKEN_PATH, form.toString(), { headers: { dpop: proof }, ip });
  }
  const proof = await dpopProof(key, { htm: 'POST', htu: PAR_HTU });
  const form = new URLSearchParams({
    response_type: 'code',
    client_id: PUBLIC_CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 'flood',
  });
  return postForm(sentinel, PAR_PATH, form.toString(), { headers: { dpop: proof }, ip });
}

/**
 * `count` flood requests, token and PAR alternating, from `ipOf(i)`; returns how many got each status. The caller
 * has one key (thumbprint) and makes a fresh `jti` each time, as any client can.
 */
export async function flood(sentinel: Sentinel, count: number, ipOf: (index: number) => string): Promise<Map<number, number>> {
  const key = await clientKey();
  const statuses = new Map<number, number>();
  for (let index = 0; index < count; index += 1) {
    const response = await floodRequest(sentinel, key, index % 2 === 0 ? 'token' : 'par', ipOf(index));
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  }
  return statuses;
}

/**
 * A whole legitimate sign-in of the public client from `ip`: optionally a push with DPoP, then authorize, password,
 * TOTP, and the code exchanged with a DPoP proof by the same key. Asserts each step; returns the token response.
 */
export async function legitimateSignIn(
  sentinel: Sentinel,
  secret: string,
  options: { ip: string; push: boolean },
): Promise<Record<string, unknown>> {
  const key = await clientKey();
  const { verifier, challenge } = pkcePair();
  const request = { client_id: PUBLIC_CLIENT_ID, redirect_uri: REDIRECT_URI, code_challenge: challenge, code_challenge_method: 'S256' };
  let query = authorizeQuery(request);
  if (options.push) {
    const pushed = await postForm(
      sentinel,
      PAR_PATH,
      new URLSearchParams({ response_type: 'code', state: 'st-1', ...request }).toString(),
      {
        headers: { dpop: await dpopProof(key, { htm: 'POST', htu: PAR_HTU }) },
        ip: options.ip,
      },
    );
    expect(pushed.status, `push: ${pushed.body}`).toBe(201);
    query = new URLSearchParams({ client_id: PUBLIC_CLIENT_ID, request_uri: jsonOf(pushed).request_uri as string });
  }
  const { interaction } = await startInteraction(sentinel, query, options.ip);
  const loginCsrf = await openLogin(sentinel, interaction);
  const password = await postLogin(sentinel, interaction, { csrf_token: loginCsrf, username: USERNAME, password: PASSWORD }, options.ip);
  expect(password.status, `password step: ${password.body}`).toBe(303);
  expect(String(password.headers.location)).toBe(`${TOTP_PATH}?interaction=${interaction}`);
  const cookie = stepCookie(password);
  const page = await call(sentinel, { path: TOTP_PATH, query: new URLSearchParams({ interaction }), ip: options.ip, headers: { cookie } });
  expect(page.status).toBe(200);
  const totp = await postForm(
    sentinel,
    TOTP_PATH,
    new URLSearchParams({ csrf_token: csrfOf(page.body), code: await generate({ secret }) }).toString(),
    { query: new URLSearchParams({ interaction }), ip: options.ip, headers: { cookie } },
  );
  expect(totp.status, `TOTP step: ${totp.body}`).toBe(303);
  const code = new URL(String(totp.headers.location)).searchParams.get('code');
  expect(code).toBeTruthy();
  const exchange = await postForm(
    sentinel,
    TOKEN_PATH,
    new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: PUBLIC_CLIENT_ID,
      code: code as string,
      code_verifier: verifier,
      redirect_uri: REDIRECT_URI,
    }).toString(),
    { headers: { dpop: await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU }) }, ip: options.ip },
  );
  expect(exchange.status, `code exchange: ${exchange.body}`).toBe(200);
  const tokens = jsonOf(exchange);
  expect(tokens.token_type).toBe('DPoP');
  return tokens;
}
