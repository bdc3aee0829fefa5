/**
 * `sentinel-idp config check` called options valid that createSentinel() refuses after resolving them: an app's ID
 * token algorithm without a key, a fapi2 app on a service signing with another algorithm, `apps` beside `appStore`,
 * `registration` on an app store that cannot manage apps, and an app's back-channel logout URI at a private address.
 * configProblems() must report each with the very field and message createSentinel() throws.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { configProblems } from '../src/config.js';
import { generatePrivateJWK, MemoryAppStore, type SentinelOptions } from '../src/index.js';
import { baseOptions } from './helpers/fixtures.js';
import { startupRefusal } from './helpers/startup-refusal.js';
import { clientKey, keyedOptions } from './helpers/key-bound.js';

const rsaOnly = [generatePrivateJWK('RS256')];
const fapi2Key = await clientKey();
/** An app store with lookups only: nothing for registration to save apps with. */
const lookupOnly = { findApp: () => null, hasAccount: () => true };
const rotation = (algorithms: ('ES256' | 'RS256')[]) => ({
  encryptionKey: randomBytes(32).toString('base64url'),
  rotateEverySeconds: 86_400,
  prePublishSeconds: 3600,
  algorithms,
});
const registration = { initialAccessToken: 'registration-token-0123456789' };

/** baseOptions() with its first app changed. */
function withFirstApp(change: Record<string, unknown>, overrides: Partial<SentinelOptions> = {}): SentinelOptions {
  const options = baseOptions(overrides);
  const [first, ...rest] = options.apps ?? [];
  return { ...options, apps: [{ ...first, ...change } as never, ...rest] };
}

const cases: [string, () => SentinelOptions][] = [
  ['an idTokenSignedResponseAlg no configured key has', () => withFirstApp({ idTokenSignedResponseAlg: 'RS256' })],
  [
    'an idTokenSignedResponseAlg outside keyRotation.algorithms',
    () => withFirstApp({ idTokenSignedResponseAlg: 'PS256' }, { keys: undefined, keyRotation: rotation(['ES256']) }),
  ],
  ['a fapi2 app on a service signing RS256', () => keyedOptions(fapi2Key, { profile: 'fapi2' }, { keys: rsaOnly })],
  [
    'a fapi2 app on a key ring signing RS256',
    () => keyedOptions(fapi2Key, { profile: 'fapi2' }, { keys: undefined, keyRotation: rotation(['RS256']) }),
  ],
  [
    'a fapi2 app on a service taking no DPoP proof algorithm of the profile',
    () => keyedOptions(fapi2Key, { profile: 'fapi2' }, { dpop: { algorithms: ['ES384', 'RS256'] } }),
  ],
  ['apps together with appStore', () => baseOptions({ appStore: new MemoryAppStore() })],
  ['registration on an app store without saveApp', () => ({ ...baseOptions({ appStore: lookupOnly, registration }), apps: [] })],
  ['a backchannelLogoutUri at a loopback address', () => withFirstApp({ backchannelLogoutUri: 'https://127.0.0.1/logout' })],
  ['a backchannelLogoutUri at localhost', () => withFirstApp({ backchannelLogoutUri: 'https://admin.localhost/logout' })],
];

describe('config check reports what createSentinel() refuses after resolving the options', () => {
  it.each(cases)('%s', (_name, make) => {
    const options = make();
    expect(configProblems(options)).toEqual([startupRefusal(options)]);
  });

  it('reports every one of them at once, in the order createSentinel() checks them', () => {
    const options = keyedOptions(
      fapi2Key,
      { profile: 'fapi2', backchannelLogoutUri: 'https://10.0.0.1/logout' },
      {
        keys: rsaOnly,
        appStore: lookupOnly,
        registration,
      },
    );
    expect(configProblems(options).map((problem) => problem.field)).toEqual([
      'keys',
      'apps',
      'registration',
      'apps[4].backchannelLogoutUri',
    ]);
  });

  it('finds nothing wrong with keys and apps that fit, without keys, or with a registration store', () => {
    expect(
      configProblems(withFirstApp({ idTokenSignedResponseAlg: 'ES256', backchannelLogoutUri: 'https://app.example.com/logout' })),
    ).toEqual([]);
    expect(configProblems(keyedOptions(fapi2Key, { profile: 'fapi2' }))).toEqual([]);
    expect(configProblems(withFirstApp({ idTokenSignedResponseAlg: 'RS256' }, { keys: undefined }))).toEqual([]);
    expect(
      configProblems(withFirstApp({ backchannelLogoutUri: 'https://127.0.0.1/logout' }, { clientJwks: { allowPrivateAddresses: true } })),
    ).toEqual([]);
    expect(configProblems({ ...baseOptions({ appStore: new MemoryAppStore(), registration }), apps: [] })).toEqual([]);
  });
});
