/**
 * The `audience` option as a function: its answer becomes the `aud` of every token of the account (RFC 9068 §3). An
 * answer that is no non-empty string (`undefined`, `''`, an async function's promise) is a bug of the hook; it used to
 * be signed into the token as no audience, an empty one or `{}`. Now the request fails with 500 server_error, the
 * TypeError reaches onError, and no token is issued (a code stays unspent for the retry). The rejection of an async
 * hook's promise is caught (vitest fails a run that leaves one unhandled).
 */
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import type { SentinelEvent } from '../src/index.js';
import { exchangeCode, jsonOf, postForm, signIn } from './helpers/direct-flow.js';
import { appTokenPath, CONSUMER_UUID, ccBody, makeSentinel } from './helpers/fixtures.js';

describe('an audience function that answers no audience', () => {
  it.each([
    ['undefined', () => undefined],
    ['an empty string', () => ''],
    ['a promise (an async function)', async () => 'https://api.example.com'],
    ['a rejecting promise', async () => Promise.reject(new Error('tenant directory down'))],
  ])('%s → 500 server_error, onError names the hook, no token; the code works once the hook is mended', async (_name, broken) => {
    const errors: unknown[] = [];
    const events: SentinelEvent[] = [];
    let audience: () => unknown = broken;
    const sentinel = makeSentinel({
      audience: (() => audience()) as never,
      onError: (error) => errors.push(error),
      onEvent: (event) => events.push(event),
    });
    const consumer = await postForm(sentinel, appTokenPath(CONSUMER_UUID), ccBody());
    expect(consumer.status).toBe(500);
    expect(jsonOf(consumer)).toEqual({ error: 'server_error', error_description: 'the server could not complete the request' });

    const { code, verifier } = await signIn(sentinel);
    const exchanged = await exchangeCode(sentinel, code, verifier);
    expect(exchanged.status).toBe(500);
    expect(jsonOf(exchanged).access_token).toBeUndefined();
    expect(errors.map(String)).toEqual([
      expect.stringContaining('audience() must return a non-empty string'),
      expect.stringContaining('audience() must return a non-empty string'),
    ]);
    expect(events.map((event) => event.type)).not.toContain('token.issued');

    audience = () => 'https://api.example.com';
    const retried = await exchangeCode(sentinel, code, verifier);
    expect(retried.status, String(retried.body)).toBe(200);
    expect(decodeJwt(jsonOf(retried).access_token as string).aud).toBe('https://api.example.com');
  });
});
