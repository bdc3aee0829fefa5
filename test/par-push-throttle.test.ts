/**
 * The per-address bound on public clients' pushed authorization requests (RFC 9126 §2.3 `429`). A public client is
 * known by its client_id alone, so anyone could push records of up to 8 KiB that live 60 s without any credential;
 * only pushes carrying DPoP were counted. Now every push of a public client counts against its client address
 * (`par.publicPushesPerAddress` per 60 s, in the Store), confidential clients' pushes are not slowed, and a store
 * that fails fails the push closed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError, MemoryStore, type SentinelOptions } from '../src/index.js';
import { contextOf } from '../src/http/context.js';
import { postForm, recordingStore } from './helpers/direct-flow.js';
import { CLIENT_ID, CLIENT_SECRET, makeSentinel, PUBLIC_CLIENT_ID, REDIRECT_URI } from './helpers/fixtures.js';
import { PAR_PATH } from './helpers/security-state-flow.js';
import { movableClock } from './helpers/clock.js';
import { pkcePair } from './helpers/pkce.js';
import { addressBoundSuite } from './helpers/address-bound-suite.js';

afterEach(() => {
  vi.restoreAllMocks();
});

function sentinelWith(limit: number, extra: Partial<SentinelOptions> = {}) {
  return makeSentinel({ par: { publicPushesPerAddress: limit }, ...extra });
}

type Pusher = ReturnType<typeof makeSentinel>;

/** A valid push of the public client (no credential, no DPoP) from `ip`. */
function publicPush(sentinel: Pusher, ip: string, headers: Record<string, string> = {}) {
  const form = new URLSearchParams({
    response_type: 'code',
    client_id: PUBLIC_CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 'x'.repeat(4000),
  });
  return postForm(sentinel, PAR_PATH, form.toString(), { ip, headers });
}

function confidentialPush(sentinel: Pusher, ip: string) {
  const form = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    redirect_uri: REDIRECT_URI,
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
  });
  return postForm(sentinel, PAR_PATH, form.toString(), { ip });
}

addressBoundSuite({
  name: 'pushes',
  networkOption: 'par.publicPushesPerNetwork',
  accepted: 201,
  sentinelWith: ({ address, network }, extra = {}) =>
    sentinelWith(address, {
      ...extra,
      par: { publicPushesPerAddress: address, ...(network === undefined ? {} : { publicPushesPerNetwork: network }) },
    }),
  publicRequest: publicPush,
  confidentialRequest: confidentialPush,
  recordPrefixes: ['par:'],
  counterPrefix: 'throttle-par',
  otherAreas: ['throttle', 'throttle-device'],
  acceptedField: 'request_uri',
  // The window is the time a pushed request is kept: 60 s.
  retryAfter: '60',
});

describe('pushes of public clients, per client address: the window and the option', () => {
  it('counts only valid pushes, and opens a new window after 60 s', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(1, { store });
    const bad = new URLSearchParams({ response_type: 'code', client_id: PUBLIC_CLIENT_ID, redirect_uri: REDIRECT_URI });
    for (let index = 0; index < 3; index += 1) {
      expect((await postForm(sentinel, PAR_PATH, bad.toString(), { ip: '198.51.100.50' })).status).toBe(400);
    }
    expect(store.writes).toEqual([]);
    expect((await publicPush(sentinel, '198.51.100.50')).status).toBe(201);
    expect((await publicPush(sentinel, '198.51.100.50')).status).toBe(429);
    const clock = movableClock();
    try {
      await clock.advance(60_100);
      expect((await publicPush(sentinel, '198.51.100.50')).status).toBe(201);
    } finally {
      clock.restore();
    }
  });

  it('is an option with a default of 1000, refused when not a positive integer', async () => {
    expect(() => makeSentinel({ par: { publicPushesPerAddress: 0 } })).toThrow(ConfigurationError);
    expect(() => makeSentinel({ par: { publicPushesPerAddress: 1.5 } })).toThrow(ConfigurationError);
    expect(() => makeSentinel({ par: { pushesPerAddress: 5 } } as unknown as Partial<SentinelOptions>)).toThrow(ConfigurationError);
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ store });
    expect((await publicPush(sentinel, '198.51.100.70')).status).toBe(201);
    expect(await store.get('throttle-par:ip:198.51.100.70')).toBe('1');
  });
});

describe('pushes of public clients, per IPv6 /48: the option', () => {
  it('is an option, by default ten times publicPushesPerAddress, refused when not a positive integer', () => {
    expect(() => makeSentinel({ par: { publicPushesPerNetwork: 0 } })).toThrow(ConfigurationError);
    expect(() => makeSentinel({ par: { publicPushesPerNetwork: 2.5 } })).toThrow(ConfigurationError);
    const par = (options: Partial<SentinelOptions>) => contextOf(makeSentinel(options)).config.par;
    expect(par({})).toEqual({ publicPushesPerAddress: 1000, publicPushesPerNetwork: 10_000 });
    expect(par({ par: { publicPushesPerAddress: 7 } }).publicPushesPerNetwork).toBe(70);
    expect(par({ par: { publicPushesPerNetwork: 3 } })).toEqual({ publicPushesPerAddress: 1000, publicPushesPerNetwork: 3 });
  });
});
