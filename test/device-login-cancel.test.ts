/**
 * Cancel on the login page of a device sign-in (RFC 8628): it denies the device only while the authorization is
 * still open to a decision. A login page left open while the code was approved or denied in another browser, or
 * expired, denies nothing and says so: never the "Access denied" page for a device that gets its tokens.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelEvent, type SentinelResponse, type Store } from '../src/index.js';
import { en } from '../src/i18n/en.js';
import { advanceClock } from './helpers/clock.js';
import { call, csrfOf, postForm } from './helpers/direct-flow.js';
import {
  type Browser,
  deviceApps,
  enterCode,
  jsonBody,
  openEntry,
  personDecides,
  poll,
  pollError,
  requestCodes,
} from './helpers/device-drive.js';
import { makeSentinel } from './helpers/fixtures.js';

afterEach(() => {
  vi.restoreAllMocks();
});

function deviceSentinel(overrides: Parameters<typeof makeSentinel>[0] = {}) {
  const events: SentinelEvent[] = [];
  const sentinel = makeSentinel({ apps: deviceApps(), onEvent: (event) => events.push(event), ...overrides });
  return { sentinel, events };
}

/** Enters the code in a browser and opens the login page it leads to; `cancel()` later presses its Cancel. */
async function loginPageFor(sentinel: Sentinel, userCode: string): Promise<{ cancel: () => Promise<SentinelResponse> }> {
  const browser: Browser = {};
  const entered = await enterCode(sentinel, browser, userCode);
  expect(entered.status).toBe(303);
  const [path, query] = String(entered.headers.location).split('?') as [string, string];
  const headers = { 'sec-fetch-site': 'same-origin' };
  const page = await call(sentinel, { path, query, headers });
  expect(page.status).toBe(200);
  const form = new URLSearchParams({ csrf_token: csrfOf(String(page.body)), cancel: '1' }).toString();
  return { cancel: () => postForm(sentinel, path, form, { query, headers }) };
}

function denials(events: SentinelEvent[]): SentinelEvent[] {
  return events.filter((event) => event.type === 'device.denied');
}

describe('cancel on the login page of a device sign-in', () => {
  it('denies the device while the code is still undecided', async () => {
    const { sentinel, events } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    const { cancel } = await loginPageFor(sentinel, codes.user_code);
    const cancelled = await cancel();
    expect(cancelled.status).toBe(200);
    expect(String(cancelled.body)).toContain(en.deviceDeniedTitle);
    expect(denials(events)).toHaveLength(1);
    expect(await pollError(sentinel, codes.device_code)).toBe('access_denied');
  });

  it('denies nothing once another browser approved the code: "already used", and the device gets its tokens', async () => {
    const { sentinel, events } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    const { cancel } = await loginPageFor(sentinel, codes.user_code);
    expect((await personDecides(sentinel, codes.user_code, 'approve')).status).toBe(200);
    const cancelled = await cancel();
    expect(cancelled.status).toBe(400);
    expect(String(cancelled.body)).toContain(en.deviceCodeUsed);
    expect(String(cancelled.body)).not.toContain(en.deviceDeniedTitle);
    expect(denials(events)).toEqual([]);
    const polled = await poll(sentinel, codes.device_code);
    expect(polled.status).toBe(200);
    expect(jsonBody(polled).access_token).toEqual(expect.any(String));
  });

  it('says "already used" when another browser denied the code first, and denies it only once', async () => {
    const { sentinel, events } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    const { cancel } = await loginPageFor(sentinel, codes.user_code);
    expect((await personDecides(sentinel, codes.user_code, 'deny')).status).toBe(200);
    const cancelled = await cancel();
    expect(cancelled.status).toBe(400);
    expect(String(cancelled.body)).toContain(en.deviceCodeUsed);
    expect(denials(events)).toHaveLength(1);
    expect(await pollError(sentinel, codes.device_code)).toBe('access_denied');
  });

  it('says the code expired when it did while the login page was open, and denies nothing', async () => {
    const { sentinel, events } = deviceSentinel({ deviceFlow: { expiresIn: 60 } });
    const codes = await requestCodes(sentinel);
    const { cancel } = await loginPageFor(sentinel, codes.user_code);
    advanceClock(61);
    const cancelled = await cancel();
    expect(cancelled.status).toBe(400);
    expect(String(cancelled.body)).toContain(en.deviceCodeWrong);
    expect(denials(events)).toEqual([]);
    expect(await pollError(sentinel, codes.device_code)).toBe('expired_token');
  });

  it('answers "already used" in the language the code entry was opened in, and its form keeps it', async () => {
    const { sentinel } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    const headers = { 'accept-language': 'en', 'sec-fetch-site': 'same-origin' };
    const entry = await openEntry(sentinel, { language: 'en' }, 'ui_locales=fr');
    const action = /<form method="post" action="([^"]+)"/.exec(String(entry.page.body))?.[1]?.replaceAll('&amp;', '&') ?? '';
    const [entryPath, entryQuery] = action.split('?') as [string, string];
    const form = new URLSearchParams({ csrf_token: entry.csrf, user_code: codes.user_code }).toString();
    const entered = await postForm(sentinel, entryPath, form, { query: entryQuery, headers: { ...headers, cookie: entry.cookie } });
    expect(entered.status).toBe(303);
    const [path, query] = String(entered.headers.location).split('?') as [string, string];
    const page = await call(sentinel, { path, query, headers });
    expect(String(page.body)).toContain('<html lang="fr"');
    expect((await personDecides(sentinel, codes.user_code, 'approve')).status).toBe(200);
    const cancel = new URLSearchParams({ csrf_token: csrfOf(String(page.body)), cancel: '1' }).toString();
    const cancelled = await postForm(sentinel, path, cancel, { query, headers });
    expect(cancelled.status).toBe(400);
    expect(String(cancelled.body)).toContain('<html lang="fr"');
    expect(String(cancelled.body)).toContain('Ce code a déjà été utilisé');
    // The code entry form it shows again posts in French too, as the one it was first opened with.
    expect(String(cancelled.body)).toMatch(/<form method="post" action="[^"]*\?ui_locales=fr"/);
  });

  it('keeps the login page when the denial did not apply (a veto, every write lost to polls): Cancel again denies', async () => {
    const memory = new MemoryStore();
    let jammed = false;
    // While jammed, every write of the device record loses, as to a device polling in bursts.
    const store: Store = new Proxy(memory, {
      get: (target, name) => {
        if (name === 'swap') {
          return (entries: Parameters<Store['swap']>[0]) =>
            jammed && entries.some((entry) => entry.key.startsWith('device:')) ? Promise.resolve(false) : memory.swap(entries);
        }
        const value: unknown = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    let veto = false;
    const events: SentinelEvent[] = [];
    const onEvent = (event: SentinelEvent): void => {
      if (veto && event.type === 'device.denied') throw new Error('device.denied vetoed');
      events.push(event);
    };
    const sentinel = makeSentinel({ apps: deviceApps(), store, onEvent, onError: () => undefined });
    const codes = await requestCodes(sentinel);
    const { cancel } = await loginPageFor(sentinel, codes.user_code);
    jammed = true;
    const busy = await cancel();
    jammed = false;
    expect(busy.status).toBe(503);
    veto = true;
    const vetoed = await cancel();
    veto = false;
    expect(vetoed.status).toBe(500);
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
    // The same Cancel, posted again, still finds its sign-in and denies the device.
    const cancelled = await cancel();
    expect(cancelled.status, String(cancelled.body)).toBe(200);
    expect(String(cancelled.body)).toContain(en.deviceDeniedTitle);
    expect(denials(events)).toHaveLength(1);
    expect(await pollError(sentinel, codes.device_code)).toBe('access_denied');
  });
});
