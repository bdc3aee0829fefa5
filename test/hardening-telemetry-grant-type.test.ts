/**
 * The request span names the grant (`oauth.grant_type`) as soon as the request's `grant_type` is read, so refused
 * and failed token requests of every grant and every token path carry it, not only those that issue a token. A
 * grant type the service does not know stays out of the span (it is the client's free text). The OpenTelemetry SDK
 * is registered globally with in-memory exporters (ISOLATED in vitest.config.ts).
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import type { Sentinel, SentinelResponse } from '../src/index.js';
import { ACCOUNT_PATH, jsonOf, postForm, TOKEN_PATH } from './helpers/direct-flow.js';
import { appTokenPath, ccBody, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';
import { registerSuiteSDK } from './helpers/otel-sdk.js';

const sdk = registerSuiteSDK();

const V1_APP_TOKEN = `${ACCOUNT_PATH}/app/token`;

/** The one request span the call produced (`sentinel <route>`), after checking the answer's status and error. */
function onlySpan(route: string, response: SentinelResponse, status: number, error: string): ReadableSpan {
  expect(response.status, response.body).toBe(status);
  expect(jsonOf(response).error).toBe(error);
  const spans = sdk.spans().filter((span) => span.name === `sentinel ${route}`);
  expect(spans).toHaveLength(1);
  const span = spans[0] as ReadableSpan;
  expect(span.attributes['oauth.error']).toBe(error);
  expect(span.attributes['http.response.status_code']).toBe(status);
  return span;
}

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

describe('oauth.grant_type on refused token requests', () => {
  const cases: { name: string; route: string; path: string; body: string; status: number; error: string; grantType: string }[] = [
    {
      name: 'client credentials with a wrong secret at the consumer-bound (v2) app token path',
      route: 'app-token-v2',
      path: appTokenPath(CONSUMER_UUID),
      body: ccBody({ client_secret: 'not-the-secret-0001' }),
      status: 400,
      error: 'invalid_client',
      grantType: 'client_credentials',
    },
    {
      name: 'client credentials without a consumer at the v2 path',
      route: 'app-token-v2',
      path: appTokenPath(null),
      body: ccBody(),
      status: 400,
      error: 'invalid_request',
      grantType: 'client_credentials',
    },
    {
      name: 'client credentials with a wrong secret at the v1 app token path',
      route: 'app-token-v1',
      path: V1_APP_TOKEN,
      body: ccBody({ client_secret: 'not-the-secret-0001' }),
      status: 400,
      error: 'invalid_client',
      grantType: 'client_credentials',
    },
    {
      name: 'client credentials with a wrong secret at the token endpoint',
      route: 'token',
      path: TOKEN_PATH,
      body: ccBody({ client_secret: 'not-the-secret-0001' }),
      status: 400,
      error: 'invalid_client',
      grantType: 'client_credentials',
    },
    {
      name: 'an unknown authorization code',
      route: 'token',
      path: TOKEN_PATH,
      body: form({
        grant_type: 'authorization_code',
        code: 'no-such-code',
        code_verifier: 'v'.repeat(43),
        redirect_uri: 'https://app.example.com/cb',
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
      }),
      status: 400,
      error: 'invalid_grant',
      grantType: 'authorization_code',
    },
    {
      name: 'an unknown refresh token',
      route: 'token',
      path: TOKEN_PATH,
      body: form({ grant_type: 'refresh_token', refresh_token: 'no-such-token', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
      status: 400,
      error: 'invalid_grant',
      grantType: 'refresh_token',
    },
    {
      name: 'a known grant the v2 path does not serve',
      route: 'app-token-v2',
      path: appTokenPath(CONSUMER_UUID),
      body: ccBody({ grant_type: 'refresh_token' }),
      status: 400,
      error: 'unsupported_grant_type',
      grantType: 'refresh_token',
    },
  ];

  for (const { name, route, path, body, status, error, grantType } of cases) {
    it(`names the grant: ${name}`, async () => {
      const response = await postForm(makeSentinel(), path, body);
      expect(onlySpan(route, response, status, error).attributes['oauth.grant_type']).toBe(grantType);
    });
  }

  it('names the grant of a request that fails with server_error (the app store is down)', async () => {
    const errors: unknown[] = [];
    const appStore = {
      findApp: () => Promise.reject(new Error('app store down')),
      hasAccount: () => Promise.reject(new Error('app store down')),
    };
    const sentinel: Sentinel = makeSentinel({ apps: [], appStore, onError: (cause) => errors.push(cause) });
    for (const [route, path] of [
      ['app-token-v2', appTokenPath(CONSUMER_UUID)],
      ['token', TOKEN_PATH],
    ] as const) {
      await sdk.reset();
      const response = await postForm(sentinel, path, ccBody());
      expect(onlySpan(route, response, 500, 'server_error').attributes['oauth.grant_type']).toBe('client_credentials');
    }
    expect(errors).toHaveLength(2);
  });

  it('leaves a grant type the service does not know, and a missing one, out of the span', async () => {
    const sentinel = makeSentinel();
    const unknown = await postForm(sentinel, TOKEN_PATH, form({ grant_type: 'urn:example:made-up-grant', ...clientFields() }));
    expect(onlySpan('token', unknown, 400, 'unsupported_grant_type').attributes).not.toHaveProperty('oauth.grant_type');
    await sdk.reset();
    const missing = await postForm(sentinel, TOKEN_PATH, form(clientFields()));
    expect(onlySpan('token', missing, 400, 'invalid_request').attributes).not.toHaveProperty('oauth.grant_type');
  });

  it('still names the grant once on a token that is issued', async () => {
    const response = await postForm(makeSentinel(), TOKEN_PATH, ccBody());
    expect(response.status).toBe(200);
    const span = sdk.spans().find((candidate) => candidate.name === 'sentinel token') as ReadableSpan;
    expect(span.attributes['oauth.grant_type']).toBe('client_credentials');
    expect(span.attributes['oauth.client_id']).toBe(CLIENT_ID);
  });
});

function clientFields(): Record<string, string> {
  return { client_id: CLIENT_ID, client_secret: CLIENT_SECRET };
}
