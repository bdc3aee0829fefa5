/**
 * Spans and metrics of the exchange grants, read back through the OpenTelemetry SDK registered globally with
 * in-memory exporters (ISOLATED in vitest.config.ts): each request is one `sentinel token` span naming its grant,
 * an issued token counts in `sentinel.tokens.issued` under that grant and a refusal in `sentinel.tokens.denied`,
 * and nothing exported carries a presented or issued token.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { BOT, brandJWT, brandKey, exchangeOptions, JWT_BEARER, TOKEN_EXCHANGE, TOKEN_PATH, TYPE } from './helpers/exchange.js';
import { makeSentinel } from './helpers/fixtures.js';
import { registerSuiteSDK, total } from './helpers/otel-sdk.js';

const sdk = registerSuiteSDK();
const key = await brandKey();

function tokenSpans(): ReadableSpan[] {
  return sdk.spans().filter((span) => span.name === 'sentinel token');
}

describe('telemetry of the exchange grants', () => {
  it('one span per request with its grant, counted as issued or denied, with no token exported', async () => {
    const sentinel = makeSentinel(exchangeOptions(key));
    const post = (fields: Record<string, string>) => postForm(sentinel, TOKEN_PATH, new URLSearchParams({ ...fields, ...BOT }).toString());
    const bearer = await post({ grant_type: JWT_BEARER, assertion: await brandJWT(key) });
    expect(bearer.status).toBe(200);
    const exchanged = await post({ grant_type: TOKEN_EXCHANGE, subject_token: await brandJWT(key), subject_token_type: TYPE.idToken });
    expect(exchanged.status).toBe(200);
    const delegated = await post({
      grant_type: TOKEN_EXCHANGE,
      subject_token: jsonOf(exchanged).access_token as string,
      subject_token_type: TYPE.accessToken,
    });
    expect(delegated.status).toBe(200);
    const refused = await post({ grant_type: JWT_BEARER, assertion: await brandJWT(key, { aud: 'https://elsewhere.example' }) });
    expect(refused.status).toBe(400);

    const spans = tokenSpans();
    expect(spans.map((span) => [span.attributes['oauth.grant_type'], span.attributes['http.response.status_code']])).toEqual([
      [JWT_BEARER, 200],
      [TOKEN_EXCHANGE, 200],
      [TOKEN_EXCHANGE, 200],
      [JWT_BEARER, 400],
    ]);
    expect(spans[3]?.attributes['oauth.error']).toBe('invalid_grant');

    const points = await sdk.collect();
    expect(total(points, 'sentinel.tokens.issued', { 'oauth.grant_type': JWT_BEARER })).toBe(1);
    expect(total(points, 'sentinel.tokens.issued', { 'oauth.grant_type': TOKEN_EXCHANGE })).toBe(2);
    expect(total(points, 'sentinel.tokens.denied', { 'oauth.error': 'invalid_grant' })).toBe(1);

    const exported = JSON.stringify([
      sdk.spans().map((span) => [span.name, span.attributes, span.events.map((event) => [event.name, event.attributes])]),
      points,
    ]);
    for (const response of [bearer, exchanged, delegated]) {
      const token = jsonOf(response).access_token as string;
      expect(exported).not.toContain(token.split('.')[2]);
    }
    expect(exported).not.toMatch(/eyJ/);
  });
});
