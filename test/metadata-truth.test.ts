/**
 * The account metadata says only what the running configuration does (RFC 8414 §2, OpenID Connect Discovery §3):
 * clients configure themselves from it, so a member that is missing or promises too much breaks them.
 */
import { describe, expect, it } from 'vitest';
import type { SentinelOptions } from '../src/index.js';
import { ACCOUNT_PATH, call } from './helpers/direct-flow.js';
import { makeSentinel } from './helpers/fixtures.js';

async function metadataOf(overrides: Partial<SentinelOptions> = {}): Promise<Record<string, unknown>> {
  const response = await call(makeSentinel(overrides), { path: `${ACCOUNT_PATH}/.well-known/openid-configuration` });
  expect(response.status).toBe(200);
  return JSON.parse(response.body as string) as Record<string, unknown>;
}

describe('client authentication metadata (RFC 8414 §2)', () => {
  it('lists the assertion algorithms of every endpoint whose methods include private_key_jwt', async () => {
    const metadata = await metadataOf();
    const tokenAlgs = metadata.token_endpoint_auth_signing_alg_values_supported as string[];
    expect(tokenAlgs.length).toBeGreaterThan(0);
    for (const endpoint of ['token', 'revocation', 'introspection']) {
      const methods = metadata[`${endpoint}_endpoint_auth_methods_supported`] as string[];
      expect(methods, endpoint).toContain('private_key_jwt');
      // "MUST be present if either of these authentication methods are specified"; "none" MUST NOT be used.
      const algs = metadata[`${endpoint}_endpoint_auth_signing_alg_values_supported`];
      expect(algs, endpoint).toEqual(tokenAlgs);
      expect(algs, endpoint).not.toContain('none');
    }
  });
});
