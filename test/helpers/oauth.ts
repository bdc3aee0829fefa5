/**
 * Helpers of the OAuth suites: codes issued through the code contract (`issueCode`), and form posts to the
 * account token endpoints.
 */
import request from 'supertest';
import { expect } from 'vitest';
import { issueCode, type CodeRecord } from '../../src/token/code-records.js';
import type { Sentinel } from '../../src/index.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, ISSUER, REDIRECT_URI, USER_ID } from './fixtures.js';
import { contextOf } from '../../src/http/context.js';

export const FORM = 'application/x-www-form-urlencoded;charset=UTF-8';
export const ACCOUNT_ISSUER = `${ISSUER}/sentinel/api/account/${ACCOUNT}`;
export const TOKEN_PATH = `/sentinel/api/account/${ACCOUNT}/token`;
export const REVOKE_PATH = `${TOKEN_PATH}/revoke`;
export const INTROSPECT_PATH = `${TOKEN_PATH}/introspect`;
export const CLIENT = { client_id: CLIENT_ID, client_secret: CLIENT_SECRET };

/** Issues a code for the confidential client through the code contract, as the authorize endpoint would. */
export function codeFor(sentinel: Sentinel, overrides: Partial<Omit<CodeRecord, 'issuedAt'>> = {}): Promise<string> {
  return issueCode(contextOf(sentinel), {
    accountId: ACCOUNT,
    clientId: CLIENT_ID,
    redirectUri: REDIRECT_URI,
    redirectUriInRequest: true,
    userId: USER_ID,
    authTime: Math.floor(Date.now() / 1000) - 5,
    issuedAt: Math.floor(Date.now() / 1000),
    ...overrides,
  });
}

/** Posts a form to `path`. */
export function postForm(server: unknown, path: string, form: Record<string, string>, authorization?: string): request.Test {
  const test = request(server as Parameters<typeof request>[0])
    .post(path)
    .set('content-type', FORM);
  if (authorization !== undefined) test.set('authorization', authorization);
  return test.send(new URLSearchParams(form).toString());
}

/** A code exchange by the confidential client with body authentication. */
export function exchange(server: unknown, code: string, extra: Record<string, string> = {}): request.Test {
  return postForm(server, TOKEN_PATH, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, ...CLIENT, ...extra });
}

/** A refresh by the confidential client with body authentication. */
export function refresh(server: unknown, refreshToken: string, extra: Record<string, string> = {}): request.Test {
  return postForm(server, TOKEN_PATH, { grant_type: 'refresh_token', refresh_token: refreshToken, ...CLIENT, ...extra });
}

/** The RFC 6749 §5.1 headers of every token-endpoint JSON response. */
export function expectNoStore(response: request.Response): void {
  expect(response.headers['content-type']).toBe('application/json;charset=UTF-8');
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers.pragma).toBe('no-cache');
}

/** An RFC 6749 §5.2 error and nothing else. */
export function expectError(response: request.Response, status: number, error: string): void {
  expect(response.status).toBe(status);
  expectNoStore(response);
  expect(response.body.error).toBe(error);
  expect(typeof response.body.error_description).toBe('string');
  expect(Object.keys(response.body).sort()).toEqual(['error', 'error_description']);
}

/** Whether `sentinel.verifyAccessToken` still accepts `token`. */
export async function isAccepted(sentinel: Sentinel, token: string): Promise<boolean> {
  try {
    await sentinel.verifyAccessToken(token, { accountId: ACCOUNT });
    return true;
  } catch {
    return false;
  }
}

/** Posts a raw body with the given Content-Type (for repeated parameters and wrong content types). */
export function postRaw(server: unknown, path: string, body: string, contentType = FORM): request.Test {
  return request(server as Parameters<typeof request>[0])
    .post(path)
    .set('content-type', contentType)
    .send(body);
}
