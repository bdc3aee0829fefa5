/**
 * A client of the registration endpoints (RFC 7591 §3, RFC 7592 §2) over `sentinel.handle()`: register with an
 * initial access token, then read, replace, rotate or delete with the registration access token it returned.
 */
import { expect } from 'vitest';
import type { Sentinel, SentinelResponse } from '../../src/index.js';
import { call, jsonOf } from './direct-flow.js';
import { ACCOUNT } from './fixtures.js';

/** The initial access token the registration tests configure. */
export const INITIAL_ACCESS_TOKEN = 'initial-access-token-for-hardening';

/** The registration endpoint of `accountId`. */
export function registerPath(accountId: string = ACCOUNT): string {
  return `/sentinel/api/account/${accountId}/register`;
}

/** What a successful registration answers (RFC 7591 §3.2.1). */
export interface Registered {
  client_id: string;
  client_secret?: string;
  registration_access_token: string;
  registration_client_uri: string;
  [member: string]: unknown;
}

/** Posts client metadata to the registration endpoint; `token` replaces the initial access token. */
export function postRegistration(
  sentinel: Sentinel,
  body: unknown,
  options: { token?: string; ip?: string; accountId?: string; headers?: Record<string, string> } = {},
): Promise<SentinelResponse> {
  return call(sentinel, {
    method: 'POST',
    path: registerPath(options.accountId),
    headers: {
      authorization: `Bearer ${options.token ?? INITIAL_ACCESS_TOKEN}`,
      'content-type': 'application/json',
      ...options.headers,
    },
    body: JSON.stringify(body),
    ...(options.ip === undefined ? {} : { ip: options.ip }),
  });
}

/** Registers a client and insists on 201. */
export async function registerClient(sentinel: Sentinel, body: unknown = { grant_types: ['client_credentials'] }): Promise<Registered> {
  const response = await postRegistration(sentinel, body);
  expect(response.status, response.body).toBe(201);
  return jsonOf(response) as Registered;
}

/** A request to the client's configuration endpoint (`suffix` `/secret` rotates the secret). */
export function manageClient(
  sentinel: Sentinel,
  method: string,
  info: Registered,
  options: { token?: string; suffix?: string; body?: unknown; ip?: string } = {},
): Promise<SentinelResponse> {
  return call(sentinel, {
    method,
    path: new URL(info.registration_client_uri).pathname + (options.suffix ?? ''),
    headers: {
      authorization: `Bearer ${options.token ?? info.registration_access_token}`,
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    ...(options.ip === undefined ? {} : { ip: options.ip }),
  });
}
