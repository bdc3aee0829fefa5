/**
 * RFC 6749 §5.2: an `error_description` is made of %x20-21 / %x23-5B / %x5D-7E only, in the JSON body, in an error
 * redirect and in a `WWW-Authenticate` challenge. The service's own descriptions cite sections (`§`) and quote
 * characters (`"`), and a few quote what the client sent.
 */
import { describe, expect, it } from 'vitest';
import { OAuthError, wireDescription } from '../src/errors.js';
import { call } from './helpers/direct-flow.js';
import { ACCOUNT, basic, CLIENT_ID, CLIENT_SECRET, makeSentinel } from './helpers/fixtures.js';

const ALLOWED = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;

/** The 400 body of a token request of the app with `form`. */
async function refusedTokenRequest(form: Record<string, string>): Promise<{ error: string; error_description: string }> {
  const response = await call(makeSentinel(), {
    method: 'POST',
    path: `/sentinel/api/account/${ACCOUNT}/token`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    body: new URLSearchParams(form).toString(),
  });
  expect(response.status).toBe(400);
  return JSON.parse(String(response.body)) as { error: string; error_description: string };
}

describe('error_description characters (RFC 6749 §5.2)', () => {
  it('spells out §, turns quotes and backslashes into allowed ones and anything else into ?', () => {
    expect(wireDescription('code_verifier must be 43-128 characters (RFC 7636 §4.1)')).toBe(
      'code_verifier must be 43-128 characters (RFC 7636 section 4.1)',
    );
    expect(wireDescription('must not contain "[", "]" or \\')).toBe("must not contain '[', ']' or /");
    expect(wireDescription('scope x\té\u0000')).toBe('scope x???');
    const plain = 'the code is invalid or has expired';
    expect(wireDescription(plain)).toBe(plain);
    for (const text of ['§', '"\\', 'é€😀', '\r\n\t', 'a § b']) expect(wireDescription(text)).toMatch(ALLOWED);
  });

  it('keeps the description onError sees, and sends the allowed one in the body', () => {
    const error = new OAuthError('invalid_request', 'see RFC 7636 §4.1');
    expect(error.description).toBe('see RFC 7636 §4.1');
    expect(error.toJSON()).toEqual({ error: 'invalid_request', error_description: 'see RFC 7636 section 4.1' });
  });

  it('answers a malformed code_verifier at the token endpoint within the characters', async () => {
    const body = await refusedTokenRequest({ grant_type: 'authorization_code', code: 'x', code_verifier: 'short' });
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toContain('RFC 7636 section 4.1');
    expect(body.error_description).toMatch(ALLOWED);
  });

  it('answers a resource with a stray % within the characters (the URI check quotes the "%")', async () => {
    const body = await refusedTokenRequest({ grant_type: 'client_credentials', resource: 'https://api.example.com/a%zz' });
    expect(body.error).toBe('invalid_target');
    expect(body.error_description).toContain("'%'");
    expect(body.error_description).toMatch(ALLOWED);
  });
});
