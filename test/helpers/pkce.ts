/** PKCE pairs (RFC 7636 §4.1, §4.2) for the suites that drive the code flow. */
import { createHash, randomBytes } from 'node:crypto';

/** A fresh S256 pair: a 43-character verifier and its challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}
