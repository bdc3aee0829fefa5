/**
 * The discovery documents name every endpoint by URL; those URLs are built from the route table. The documents
 * recorded in `metadata-snapshot.json` were produced before that change, by string concatenation: every
 * configuration here must still produce them byte for byte.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { SentinelOptions } from '../src/index.js';
import { contextOf } from '../src/http/context.js';
import { authorizationServerMetadata } from '../src/metadata/server-metadata.js';
import { call } from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, CLIENT_SECRET, makeSentinel } from './helpers/fixtures.js';

const SNAPSHOT = new URL('./metadata-snapshot.json', import.meta.url);
const ODD_ACCOUNT = 'a b+ü%é';

/** The configurations whose documents are recorded: default, another issuer and base path, registration on. */
const CONFIGURATIONS: Record<string, Partial<SentinelOptions>> = {
  default: {},
  'other issuer and base path': { issuer: 'https://id.example.com:8443', basePath: '/auth/v1' },
  'registration on': { registration: { initialAccessToken: 'an-initial-access-token-long-enough' } },
  'account id needing encoding': {
    apps: [
      ...(baseOptions().apps ?? []),
      { accountId: ODD_ACCOUNT, clientId: 'odd-client', clientSecret: CLIENT_SECRET, redirectUris: ['https://odd.example.com/cb'] },
    ],
  },
};

/** Every document a configuration serves: the three well-known URLs, and the per-account JWKS variant. */
async function documents(overrides: Partial<SentinelOptions>): Promise<Record<string, string>> {
  const sentinel = makeSentinel(overrides);
  const basePath = overrides.basePath ?? '/sentinel';
  const accountId = overrides.apps === undefined ? ACCOUNT : ODD_ACCOUNT;
  const account = `${basePath}/api/account/${encodeURIComponent(accountId)}`;
  const served: Record<string, string> = {};
  for (const path of [
    `/.well-known/oauth-authorization-server${account}`,
    `${account}/.well-known/oauth-authorization-server`,
    `${account}/.well-known/openid-configuration`,
  ]) {
    const response = await call(sentinel, { path });
    expect(response.status, path).toBe(200);
    served[path] = response.body as string;
  }
  const context = contextOf(sentinel);
  // keysPerAccount needs a key ring; only its jwks_uri differs, so the document is built with the flag alone.
  served.keysPerAccount = JSON.stringify(
    authorizationServerMetadata({ ...context, config: { ...context.config, keysPerAccount: true } }, accountId),
  );
  return served;
}

describe('discovery documents built from the route table', () => {
  it('are byte-identical to the documents recorded before the change', async () => {
    const now: Record<string, Record<string, string>> = {};
    for (const [name, overrides] of Object.entries(CONFIGURATIONS)) now[name] = await documents(overrides);
    if (process.env.RECORD_METADATA_SNAPSHOT === '1') writeFileSync(SNAPSHOT, `${JSON.stringify(now, null, 2)}\n`);
    const recorded = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as typeof now;
    expect(Object.keys(now)).toEqual(Object.keys(recorded));
    for (const name of Object.keys(recorded)) expect(now[name], name).toEqual(recorded[name]);
  });
});

describe('route paths', () => {
  it('refuse to build a URL with a hole: a missing parameter is a TypeError', async () => {
    const { routePath, routeUrl } = await import('../src/http/route-paths.js');
    const config = { issuer: 'https://id.example.com', basePath: '/sentinel' };
    expect(() => routePath(config, 'client-secret', { accountId: '1' })).toThrow(
      new TypeError('route path /api/account/{accountId}/register/{clientId}/secret needs clientId'),
    );
    expect(routeUrl(config, 'client-secret', { accountId: '1/2', clientId: 'c d' })).toBe(
      'https://id.example.com/sentinel/api/account/1%2F2/register/c%20d/secret',
    );
    expect(routePath(config, 'jwks')).toBe('/sentinel/well-known/jwks');
  });
});
