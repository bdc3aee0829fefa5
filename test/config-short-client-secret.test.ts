/**
 * A client secret the operator chose (`apps[].clientSecret`) had no minimum length, though it is stored as a fast
 * SHA-256 digest and the token endpoint keeps no per-client count of failures (RFC 6749 §2.3.1 asks for protection
 * against brute force): only its length protects it. A short one is not refused (existing configurations use them)
 * but warned about at start through the configured logger, naming the app and the length, never the secret.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSentinel, generatePrivateJWK, hashClientSecret, type SentinelOptions } from '../src/index.js';
import { ACCOUNT } from './helpers/fixtures.js';

const SHORT = 'short-chosen-secret-1234'; // 24 characters
const LONG = 'a-long-chosen-secret-of-32-chars'; // 32 characters
const keys = [generatePrivateJWK('ES256'), generatePrivateJWK('RS256')];

function warningsFor(apps: SentinelOptions['apps']): string[] {
  const warnings: string[] = [];
  createSentinel({ issuer: 'https://id.example.com', keys, apps, logger: { warn: (message) => warnings.push(message) } });
  return warnings;
}

const app = (clientId: string, fields: Record<string, unknown>) => ({
  accountId: ACCOUNT,
  clientId,
  grantTypes: ['client_credentials' as const],
  ...fields,
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a short client secret chosen by the operator', () => {
  it('is warned about through the logger, naming the client id and the length, never the secret', () => {
    const console = vi.spyOn(globalThis.console, 'warn').mockImplementation(() => {});
    const warnings = warningsFor([app('short-app', { clientSecret: SHORT }), app('long-app', { clientSecret: LONG })]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('short-app');
    expect(warnings[0]).toContain('24');
    expect(warnings[0]).toMatch(/32/);
    expect(warnings[0]).not.toContain('long-app');
    for (const part of [SHORT, SHORT.slice(0, 8), SHORT.slice(-8)]) expect(warnings[0]).not.toContain(part);
    expect(console).not.toHaveBeenCalled();
  });

  it('names each short app once, by its index and client id', () => {
    const warnings = warningsFor([
      app('one', { clientSecret: 'x' }),
      app('two', { clientSecret: LONG }),
      app('three', { clientSecret: 'y'.repeat(31) }),
    ]);
    expect(warnings).toEqual([expect.stringContaining('apps[0]'), expect.stringContaining('apps[2]')]);
    expect(warnings[0]).toContain('"one"');
    expect(warnings[1]).toContain('"three"');
    expect(warnings[1]).toContain('31');
  });

  it('says nothing of a long secret, a hash or a public client', () => {
    expect(
      warningsFor([
        app('long-app', { clientSecret: LONG }),
        app('hashed-app', { clientSecretHash: hashClientSecret('short') }),
        { accountId: ACCOUNT, clientId: 'public-app', tokenEndpointAuthMethod: 'none', redirectUris: ['https://app.example.com/cb'] },
      ]),
    ).toEqual([]);
  });
});
