/**
 * `sentinel-idp config check` called options valid that createSentinel() refuses: configProblems() ran the schema
 * and resolveConfig(), while the checks of the signing key options lived in setUpKeys, the ring's timings, its
 * encryption key and the key import. Each case here must be reported by configProblems() with the very field and
 * message createSentinel() throws.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { configProblems } from '../src/config.js';
import { generatePrivateJWK, type SentinelOptions } from '../src/index.js';
import { baseOptions } from './helpers/fixtures.js';
import { startupRefusal } from './helpers/startup-refusal.js';

const rotation = { encryptionKey: randomBytes(32).toString('base64url'), rotateEverySeconds: 86_400, prePublishSeconds: 3600 };
const good = generatePrivateJWK('ES256');
/** baseOptions() without its `keys`, for the cases that configure keys themselves. */
const withoutKeys = (): SentinelOptions => ({ ...baseOptions(), keys: undefined });

const cases: [string, () => SentinelOptions][] = [
  ['keys and keyRotation both', () => ({ ...withoutKeys(), keys: [good], keyRotation: rotation })],
  ['keyRotation.encryptionKey not 32 bytes', () => ({ ...withoutKeys(), keyRotation: { ...rotation, encryptionKey: 'dG9vLXNob3J0' } })],
  [
    'prePublishSeconds under jwksMaxAge + refreshSeconds',
    () => ({ ...withoutKeys(), keyRotation: { ...rotation, prePublishSeconds: 10 } }),
  ],
  ['rotateEverySeconds not above prePublishSeconds', () => ({ ...withoutKeys(), keyRotation: { ...rotation, rotateEverySeconds: 3600 } })],
  ['retainSeconds under the longest token lifetime', () => ({ ...withoutKeys(), keyRotation: { ...rotation, retainSeconds: 1 } })],
  ['keys[0] not a valid private JWK', () => ({ ...withoutKeys(), keys: [{ kty: 'EC', crv: 'P-256', d: 'AAAA', x: 'AAAA', y: 'AAAA' }] })],
  ['keysPerAccount without keyRotation', () => ({ ...withoutKeys(), keys: [good], keysPerAccount: true })],
  [
    'a key whose alg does not fit it',
    () => {
      const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
      return { ...withoutKeys(), keys: [good, { ...jwk, kty: 'EC', alg: 'RS256' }] };
    },
  ],
  ['a duplicate kid', () => ({ ...withoutKeys(), keys: [good, good] })],
  // A secret that failed to load (`JSON.parse(process.env.KEYS ?? '[]')`): not the development default.
  ['keys an empty list', () => ({ ...withoutKeys(), keys: [] })],
  ['keys an empty list beside keyRotation', () => ({ ...withoutKeys(), keys: [], keyRotation: rotation })],
];

describe('config check reports the key options createSentinel() refuses', () => {
  it.each(cases)('%s', (_name, make) => {
    const options = make();
    expect(configProblems(options)).toEqual([startupRefusal(options)]);
  });

  it('reports a key problem beside a problem of another field', () => {
    const options = { ...withoutKeys(), issuer: 'ftp://id.example.com', keys: [good], keysPerAccount: true };
    expect(configProblems(options).map((problem) => problem.field)).toEqual(['issuer', 'keysPerAccount']);
  });

  it('finds nothing wrong with keys, a key ring, or a ring per account', () => {
    expect(configProblems({ ...withoutKeys(), keys: [good, generatePrivateJWK('RS256')] })).toEqual([]);
    expect(configProblems({ ...withoutKeys(), keyRotation: rotation })).toEqual([]);
    expect(configProblems({ ...withoutKeys(), keyRotation: rotation, keysPerAccount: true })).toEqual([]);
    expect(configProblems(withoutKeys())).toEqual([]);
  });
});
