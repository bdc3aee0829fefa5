/**
 * PKCE (RFC 7636) at the token endpoint: S256 only (RFC 9700 §2.1.1 — `plain` protects nothing once the
 * challenge leaks), with downgrade protection (RFC 9700 §4.8.2).
 */
import { hash } from 'node:crypto';
import { OAuthError } from '../errors.js';
import { digestsEqual } from '../lib/random-secrets.js';

/** RFC 7636 §4.1: 43–128 characters of the unreserved set. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/**
 * Checks the syntax of a `code_verifier` before the code is touched, so a malformed request changes nothing.
 * @throws OAuthError invalid_request for a verifier outside RFC 7636 §4.1.
 * @example assertVerifierSyntax(params.get('code_verifier'))
 */
export function assertVerifierSyntax(verifier: string | undefined): void {
  if (verifier !== undefined && !VERIFIER.test(verifier)) {
    throw new OAuthError('invalid_request', 'code_verifier must be 43-128 characters of [A-Za-z0-9-._~] (RFC 7636 §4.1)');
  }
}

/** The S256 challenge of a verifier: BASE64URL(SHA256(ASCII(verifier))) (RFC 7636 §4.2). */
export function s256Challenge(verifier: string): string {
  // The one-shot hash (no Hash object); it reads the string as UTF-8, which is ASCII for every verifier the syntax
  // check lets through.
  return hash('sha256', verifier, 'base64url');
}

/**
 * Verifies the PKCE binding of a code (RFC 7636 §4.6). A verifier sent for a code that had no challenge is
 * refused too: accepting it would let an attacker who injected a challenge-less code pass as a PKCE client.
 * @throws OAuthError invalid_grant when the verifier is missing, unexpected or wrong.
 * @example verifyPKCE(record.codeChallenge, single(params, 'code_verifier'), { required: app.tokenEndpointAuthMethod === 'none' })
 */
export function verifyPKCE(challenge: string | undefined, verifier: string | undefined, options: { required: boolean }): void {
  if (challenge === undefined) {
    if (verifier !== undefined) {
      throw new OAuthError('invalid_grant', 'code_verifier was sent but the authorization request had no code_challenge');
    }
    if (options.required) throw new OAuthError('invalid_grant', 'PKCE is required: the authorization request must carry a code_challenge');
    return;
  }
  if (verifier === undefined) throw new OAuthError('invalid_grant', 'code_verifier is required for this code');
  if (!digestsEqual(s256Challenge(verifier), challenge)) {
    throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
  }
}
