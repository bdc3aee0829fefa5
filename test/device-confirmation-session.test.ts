/**
 * The device flow's confirmation (RFC 8628 §3.3) is bound to the browser session that signed in, not merely to its
 * user: a leaked confirmation link is useless in another browser, even one signed in as the same user. The record
 * keeps the session's digest, never its id; a record of an earlier version, which has no digest, reads as expired.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelEvent } from '../src/index.js';
import { en } from '../src/i18n/en.js';
import { sessionDigestOf } from '../src/authorize/state/session.js';
import { call } from './helpers/direct-flow.js';
import {
  type Browser,
  DEVICE_CONFIRM_PATH,
  decide,
  deviceApps,
  enterCode,
  openConfirmation,
  openConfirmationFor,
  pollError,
  requestCodes,
  signInForDevice,
} from './helpers/device-drive.js';
import { makeSentinel } from './helpers/fixtures.js';

afterEach(() => {
  vi.restoreAllMocks();
});

function deviceSentinel() {
  const events: SentinelEvent[] = [];
  const store = new MemoryStore();
  const sentinel = makeSentinel({ apps: deviceApps(), store, onEvent: (event) => events.push(event) });
  return { sentinel, store, events };
}

/** A browser signed in as the fixture user with a session of its own (through a device sign-in of another code). */
async function anotherBrowser(sentinel: Sentinel): Promise<Browser> {
  const browser: Browser = {};
  await signInForDevice(sentinel, browser, await enterCode(sentinel, browser, (await requestCodes(sentinel)).user_code));
  expect(browser.cookie).toBeDefined();
  return browser;
}

function approvals(events: SentinelEvent[]): SentinelEvent[] {
  return events.filter((event) => event.type === 'device.approved');
}

/** The confirmation page of `confirmation` as `browser` opens it. */
function openAs(sentinel: Sentinel, browser: Browser, confirmation: string) {
  const headers = { 'sec-fetch-site': 'same-origin', ...(browser.cookie === undefined ? {} : { cookie: browser.cookie }) };
  return call(sentinel, { path: DEVICE_CONFIRM_PATH, query: new URLSearchParams({ confirmation }), headers });
}

describe('the device confirmation is bound to the session that signed in', () => {
  it('is refused to another browser signed in as the same user, which can neither see nor decide it', async () => {
    const { sentinel, events } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    const a: Browser = {};
    const opened = await openConfirmationFor(sentinel, a, codes.user_code);
    const b = await anotherBrowser(sentinel);
    expect(b.cookie).not.toBe(a.cookie);
    const page = await openAs(sentinel, b, opened.confirmation);
    expect(page.status).toBe(400);
    expect(String(page.body)).toContain(en.deviceConfirmExpired);
    expect(String(page.body)).not.toContain(codes.user_code);
    for (const choice of ['approve', 'deny'] as const) expect((await decide(sentinel, b, opened, choice)).status, choice).toBe(400);
    expect(approvals(events)).toEqual([]);
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
    // The browser that signed in still decides it.
    expect((await decide(sentinel, a, opened, 'approve')).status).toBe(200);
    expect(approvals(events)).toHaveLength(1);
  });

  it('binds a browser already signed in, which goes straight to the confirmation, to its own session too', async () => {
    const { sentinel, events } = deviceSentinel();
    const a = await anotherBrowser(sentinel);
    const codes = await requestCodes(sentinel);
    const opened = await openConfirmation(sentinel, a, await enterCode(sentinel, a, codes.user_code));
    const b = await anotherBrowser(sentinel);
    expect((await openAs(sentinel, b, opened.confirmation)).status).toBe(400);
    expect((await decide(sentinel, b, opened, 'approve')).status).toBe(400);
    expect(approvals(events)).toEqual([]);
    expect((await decide(sentinel, a, opened, 'approve')).status).toBe(200);
  });

  it('keeps the digest of the session in the record, never the session id', async () => {
    const { sentinel, store } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    const a: Browser = {};
    const opened = await openConfirmationFor(sentinel, a, codes.user_code);
    const sessionId = String(a.cookie).split('=')[1] as string;
    const stored = String(await store.get(`device-confirm:${opened.confirmation}`));
    // The digest the session's record is keyed by: 22 characters for a session id of this version.
    expect(JSON.parse(stored).sessionDigest).toBe(sessionDigestOf(sessionId));
    expect(JSON.parse(stored).sessionDigest).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(stored).not.toContain(sessionId);
    expect(String(opened.page.body)).not.toContain(sessionId);
    expect(String(opened.page.body)).not.toContain(JSON.parse(stored).sessionDigest);
  });

  it('reads a confirmation of an earlier version, bound to the user only, as expired, even in its own browser', async () => {
    const { sentinel, store, events } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    const a: Browser = {};
    const opened = await openConfirmationFor(sentinel, a, codes.user_code);
    const key = `device-confirm:${opened.confirmation}`;
    const earlier = JSON.parse(String(await store.get(key))) as Record<string, unknown>;
    delete earlier.sessionDigest;
    await store.set(key, JSON.stringify(earlier), 60_000);
    expect((await openAs(sentinel, a, opened.confirmation)).status).toBe(400);
    expect((await decide(sentinel, a, opened, 'approve')).status).toBe(400);
    expect(approvals(events)).toEqual([]);
    // The way out the page names: enter the code again, which makes a confirmation of this version.
    const again = await openConfirmation(sentinel, a, await enterCode(sentinel, a, codes.user_code));
    expect((await decide(sentinel, a, again, 'approve')).status).toBe(200);
  });
});
