/**
 * The per-address bound on public clients' device authorization requests (RFC 8628 §3.1). A public client is known
 * by its client_id alone, so anyone could create device records and user-code pointers, kept 2 × expiresIn, without
 * any credential: only the entry of user codes was throttled. Now every valid request of a public client counts
 * against its client address (`deviceFlow.publicAuthorizationsPerAddress` per 2 × expiresIn, in the Store),
 * confidential clients are not slowed, and a store that fails fails the request closed.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, MemoryStore, type SentinelOptions } from '../src/index.js';
import { contextOf } from '../src/http/context.js';
import { movableClock } from './helpers/clock.js';
import {
  DEVICE_AUTHORIZATION_PATH,
  DEVICE_CLIENT_ID,
  DEVICE_CLIENT_SECRET,
  DEVICE_SECRET_CLIENT_ID,
  deviceApps,
} from './helpers/device-drive.js';
import { jsonOf, postForm, recordingStore } from './helpers/direct-flow.js';
import { makeSentinel } from './helpers/fixtures.js';
import { addressBoundSuite } from './helpers/address-bound-suite.js';

function sentinelWith(limit: number, extra: Partial<SentinelOptions> = {}) {
  return makeSentinel({ apps: deviceApps(), deviceFlow: { publicAuthorizationsPerAddress: limit }, ...extra });
}

type Device = ReturnType<typeof makeSentinel>;

/** A valid device authorization request of the public device app (no credential) from `ip`. */
function publicRequest(sentinel: Device, ip: string, headers: Record<string, string> = {}) {
  const form = new URLSearchParams({ client_id: DEVICE_CLIENT_ID, scope: 'openid' });
  return postForm(sentinel, DEVICE_AUTHORIZATION_PATH, form.toString(), { ip, headers });
}

function confidentialRequest(sentinel: Device, ip: string) {
  const form = new URLSearchParams({ client_id: DEVICE_SECRET_CLIENT_ID, client_secret: DEVICE_CLIENT_SECRET });
  return postForm(sentinel, DEVICE_AUTHORIZATION_PATH, form.toString(), { ip });
}

addressBoundSuite({
  name: 'device authorization requests',
  networkOption: 'deviceFlow.publicAuthorizationsPerNetwork',
  accepted: 200,
  sentinelWith: ({ address, network }, extra = {}) =>
    sentinelWith(address, {
      ...extra,
      deviceFlow: {
        publicAuthorizationsPerAddress: address,
        ...(network === undefined ? {} : { publicAuthorizationsPerNetwork: network }),
      },
    }),
  publicRequest,
  confidentialRequest,
  recordPrefixes: ['device:', 'device-user:'],
  counterPrefix: 'throttle-device',
  otherAreas: ['throttle', 'throttle-par'],
  acceptedField: 'device_code',
  // The window is the time a device record is kept: 2 × expiresIn (600 s by default).
  retryAfter: '1200',
  acceptedEvent: 'device.authorized',
});

describe('device authorization requests of public clients, per client address: the window and the option', () => {
  it('counts only valid requests, and opens a new window after 2 × expiresIn', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(1, { store, deviceFlow: { publicAuthorizationsPerAddress: 1, expiresIn: 60 } });
    const bad = new URLSearchParams({ client_id: DEVICE_CLIENT_ID, scope: 'a"b' });
    for (let index = 0; index < 3; index += 1) {
      const response = await postForm(sentinel, DEVICE_AUTHORIZATION_PATH, bad.toString(), { ip: '198.51.100.50' });
      expect(jsonOf(response).error).toBe('invalid_scope');
    }
    expect(store.writes).toEqual([]);
    expect((await publicRequest(sentinel, '198.51.100.50')).status).toBe(200);
    const refused = await publicRequest(sentinel, '198.51.100.50');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('120');
    const clock = movableClock();
    try {
      // Past expiresIn, the device record is still kept (late polls hear expired_token): so is the address's slot.
      await clock.advance(100_000);
      expect((await publicRequest(sentinel, '198.51.100.50')).status).toBe(429);
      await clock.advance(20_100);
      expect((await publicRequest(sentinel, '198.51.100.50')).status).toBe(200);
    } finally {
      clock.restore();
    }
  });

  it('is an option with a default of 1000, refused when not a positive integer', async () => {
    const options = (deviceFlow: unknown) => ({ apps: deviceApps(), deviceFlow }) as Partial<SentinelOptions>;
    expect(() => makeSentinel(options({ publicAuthorizationsPerAddress: 0 }))).toThrow(ConfigurationError);
    expect(() => makeSentinel(options({ publicAuthorizationsPerAddress: 1.5 }))).toThrow(ConfigurationError);
    expect(() => makeSentinel(options({ authorizationsPerAddress: 5 }))).toThrow(ConfigurationError);
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ apps: deviceApps(), store });
    expect((await publicRequest(sentinel, '198.51.100.70')).status).toBe(200);
    expect(await store.get('throttle-device:ip:198.51.100.70')).toBe('1');
  });
});

describe('device authorization requests of public clients, per IPv6 /48: the option', () => {
  /** The `index`-th /64 of the /48 2001:db8:9::/48. */
  const slash64 = (index: number) => `2001:db8:9:${index.toString(16)}::1`;

  it('is an option, by default ten times publicAuthorizationsPerAddress; IPv4 is not counted per network', async () => {
    const options = (deviceFlow: unknown) => ({ apps: deviceApps(), deviceFlow }) as Partial<SentinelOptions>;
    expect(() => makeSentinel(options({ publicAuthorizationsPerNetwork: 0 }))).toThrow(ConfigurationError);
    expect(() => makeSentinel(options({ publicAuthorizationsPerNetwork: 2.5 }))).toThrow(ConfigurationError);
    expect(contextOf(makeSentinel(options({}))).config.deviceFlow.publicAuthorizationsPerNetwork).toBe(10_000);
    expect(contextOf(makeSentinel(options({ publicAuthorizationsPerAddress: 4 }))).config.deviceFlow.publicAuthorizationsPerNetwork).toBe(
      40,
    );
    const sentinel = makeSentinel(options({ publicAuthorizationsPerAddress: 1, publicAuthorizationsPerNetwork: 2 }));
    expect((await publicRequest(sentinel, slash64(1))).status).toBe(200);
    expect((await publicRequest(sentinel, slash64(2))).status).toBe(200);
    expect((await publicRequest(sentinel, slash64(3))).status).toBe(429);
    for (let index = 0; index < 4; index += 1) expect((await publicRequest(sentinel, `198.51.100.${130 + index}`)).status).toBe(200);
  });
});
