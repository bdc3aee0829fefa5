/**
 * A device authorization whose app is disabled, deleted or loses the device code grant while the person is on the
 * confirmation page: the approval is refused and nothing is recorded, so the device gets no tokens, not even once
 * the app is enabled again (or given the grant back) before the code expires. A denial still applies.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSentinel, type Sentinel, type SentinelEvent } from '../src/index.js';
import { DEVICE_CODE_GRANT } from '../src/apps/app.js';
import { contextOf } from '../src/http/context.js';
import { ACCOUNT, baseOptions } from './helpers/fixtures.js';
import { advanceClock } from './helpers/clock.js';
import {
  type Browser,
  DEVICE_CLIENT_ID,
  decide,
  deviceApps,
  jsonBody,
  openConfirmationFor,
  poll,
  requestCodes,
} from './helpers/device-drive.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const apps = (sentinel: Sentinel) => contextOf(sentinel).apps;

async function setGrantTypes(sentinel: Sentinel, grantTypes: string[]): Promise<void> {
  const app = await apps(sentinel).findApp(ACCOUNT, DEVICE_CLIENT_ID);
  const next = { ...(app as NonNullable<typeof app>), grantTypes: grantTypes as never };
  expect(await apps(sentinel).updateApp?.(next)).toBe(true);
}

/** A change made while the person reads the confirmation page, and the one that undoes it before the device polls. */
const CHANGES: Record<string, { change: (sentinel: Sentinel) => Promise<unknown>; undo: (sentinel: Sentinel) => Promise<unknown> }> = {
  'the app disabled': {
    change: async (sentinel) => expect(await apps(sentinel).disableApp?.(ACCOUNT, DEVICE_CLIENT_ID)).toBe(true),
    undo: async (sentinel) => expect(await apps(sentinel).enableApp?.(ACCOUNT, DEVICE_CLIENT_ID)).toBe(true),
  },
  'the device code grant removed': {
    change: (sentinel) => setGrantTypes(sentinel, ['refresh_token']),
    undo: (sentinel) => setGrantTypes(sentinel, [DEVICE_CODE_GRANT, 'refresh_token']),
  },
};

function setUp(): { sentinel: Sentinel; events: SentinelEvent[] } {
  const events: SentinelEvent[] = [];
  const sentinel = createSentinel(
    baseOptions({ apps: deviceApps(), deviceFlow: { interval: 1 }, onEvent: (event) => void events.push(event) }),
  );
  return { sentinel, events };
}

describe('a device authorization whose app changed before the approval', () => {
  for (const [name, { change, undo }] of Object.entries(CHANGES)) {
    it(`${name}: the approval is refused, and the device gets no tokens once the change is undone`, async () => {
      const { sentinel, events } = setUp();
      const codes = await requestCodes(sentinel);
      const browser: Browser = {};
      const opened = await openConfirmationFor(sentinel, browser, codes.user_code);
      await change(sentinel);
      const decided = await decide(sentinel, browser, opened, 'approve');
      expect(decided.status).toBe(400);
      expect(events.map((event) => event.type)).not.toContain('device.approved');
      await undo(sentinel);
      advanceClock(5);
      const answer = await poll(sentinel, codes.device_code);
      expect(answer.status).toBe(400);
      expect(jsonBody(answer).error).toBe('authorization_pending');
      expect(events.map((event) => event.type)).not.toContain('token.issued');
    });
  }

  it('the app deleted: the approval is refused', async () => {
    const { sentinel, events } = setUp();
    const codes = await requestCodes(sentinel);
    const browser: Browser = {};
    const opened = await openConfirmationFor(sentinel, browser, codes.user_code);
    expect(await apps(sentinel).deleteApp?.(ACCOUNT, DEVICE_CLIENT_ID)).toBe(true);
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(400);
    expect(events.map((event) => event.type)).not.toContain('device.approved');
  });

  it('the app disabled: a denial still applies', async () => {
    const { sentinel, events } = setUp();
    const codes = await requestCodes(sentinel);
    const browser: Browser = {};
    const opened = await openConfirmationFor(sentinel, browser, codes.user_code);
    expect(await apps(sentinel).disableApp?.(ACCOUNT, DEVICE_CLIENT_ID)).toBe(true);
    expect((await decide(sentinel, browser, opened, 'deny')).status).toBe(200);
    expect(await apps(sentinel).enableApp?.(ACCOUNT, DEVICE_CLIENT_ID)).toBe(true);
    advanceClock(5);
    expect(jsonBody(await poll(sentinel, codes.device_code)).error).toBe('access_denied');
    expect(events.map((event) => event.type)).toContain('device.denied');
  });

  it('an unchanged app: the approval applies and the device gets its tokens', async () => {
    const { sentinel } = setUp();
    const codes = await requestCodes(sentinel);
    const browser: Browser = {};
    const opened = await openConfirmationFor(sentinel, browser, codes.user_code);
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(200);
    advanceClock(5);
    expect((await poll(sentinel, codes.device_code)).status).toBe(200);
  });
});
