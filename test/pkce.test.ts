import { describe, expect, it } from 'vitest';
import { isOAuthError } from '../src/index.js';
import { assertVerifierSyntax, s256Challenge, verifyPKCE } from '../src/token/pkce.js';

const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

function codeOf(action: () => void): string | null {
  try {
    action();
    return null;
  } catch (error) {
    return isOAuthError(error) ? error.code : 'not an OAuthError';
  }
}

describe('PKCE (RFC 7636)', () => {
  it('computes the S256 challenge of RFC 7636 Appendix B', () => {
    expect(s256Challenge(RFC_VERIFIER)).toBe(RFC_CHALLENGE);
  });

  it('accepts the matching verifier and refuses any other with invalid_grant', () => {
    expect(codeOf(() => verifyPKCE(RFC_CHALLENGE, RFC_VERIFIER, { required: false }))).toBeNull();
    expect(codeOf(() => verifyPKCE(RFC_CHALLENGE, `${RFC_VERIFIER.slice(0, -1)}l`, { required: false }))).toBe('invalid_grant');
    // A client sending the challenge itself as verifier ("plain") is refused.
    expect(codeOf(() => verifyPKCE(RFC_CHALLENGE, RFC_CHALLENGE, { required: false }))).toBe('invalid_grant');
  });

  it('refuses a verifier without challenge, a challenge without verifier, and a missing challenge when required', () => {
    expect(codeOf(() => verifyPKCE(undefined, RFC_VERIFIER, { required: false }))).toBe('invalid_grant');
    expect(codeOf(() => verifyPKCE(RFC_CHALLENGE, undefined, { required: false }))).toBe('invalid_grant');
    expect(codeOf(() => verifyPKCE(undefined, undefined, { required: true }))).toBe('invalid_grant');
    expect(codeOf(() => verifyPKCE(undefined, undefined, { required: false }))).toBeNull();
  });

  it('checks the verifier syntax: 43-128 unreserved characters', () => {
    expect(codeOf(() => assertVerifierSyntax(undefined))).toBeNull();
    expect(codeOf(() => assertVerifierSyntax('a'.repeat(43)))).toBeNull();
    expect(codeOf(() => assertVerifierSyntax('-._~'.repeat(32)))).toBeNull();
    expect(codeOf(() => assertVerifierSyntax('a'.repeat(42)))).toBe('invalid_request');
    expect(codeOf(() => assertVerifierSyntax('a'.repeat(129)))).toBe('invalid_request');
    expect(codeOf(() => assertVerifierSyntax(`${'a'.repeat(42)}/`))).toBe('invalid_request');
  });
});
