/**
 * RFC 8707 resource indicators in the device flow (RFC 8628): a CLI agent asks at the device authorization endpoint
 * for tokens to one MCP server, the person approves that request, and the device's tokens — the first and every
 * refreshed one — are for that server only. Refusals are `invalid_target` and leave nothing behind.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeJwt } from 'jose';
import type { SentinelEvent } from '../src/index.js';
import { advanceClock } from './helpers/clock.js';
import { postForm } from './helpers/direct-flow.js';
import {
  DEVICE_AUTHORIZATION_PATH,
  DEVICE_CLIENT_ID,
  deviceApps,
  jsonBody,
  personDecides,
  poll,
  pollError,
  refreshDevice,
  requestCodes,
} from './helpers/device-drive.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';

const MCP = 'https://mcp.example.com/mcp';
const OTHER = 'https://tools.example.com/api';
const ELSEWHERE = 'https://elsewhere.example.com/mcp';

/** The device app may ask tokens for two resources; nothing else is allowed. */
function resourceSentinel() {
  const events: SentinelEvent[] = [];
  const apps = deviceApps().map((app) => (app.clientId === DEVICE_CLIENT_ID ? { ...app, resources: [MCP, OTHER] } : app));
  const sentinel = makeSentinel({ apps, onEvent: (event) => events.push(event) });
  return { sentinel, events };
}

function askCodes(sentinel: ReturnType<typeof resourceSentinel>['sentinel'], resources: string[]) {
  const form = new URLSearchParams({ client_id: DEVICE_CLIENT_ID, scope: 'openid' });
  for (const resource of resources) form.append('resource', resource);
  return postForm(sentinel, DEVICE_AUTHORIZATION_PATH, form.toString());
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('device flow with resource indicators', () => {
  it('issues tokens for the resource the device asked for, and refreshes them for it', async () => {
    const { sentinel } = resourceSentinel();
    const asked = await askCodes(sentinel, [MCP]);
    expect(asked.status, String(asked.body)).toBe(200);
    const codes = jsonBody(asked) as { device_code: string; user_code: string };
    await personDecides(sentinel, codes.user_code, 'approve');
    advanceClock(6);
    const tokens = await poll(sentinel, codes.device_code);
    expect(tokens.status, String(tokens.body)).toBe(200);
    const body = jsonBody(tokens);
    expect(decodeJwt(body.access_token as string).aud).toBe(MCP);
    const refreshed = await refreshDevice(sentinel, body.refresh_token as string);
    expect(refreshed.status, String(refreshed.body)).toBe(200);
    expect(decodeJwt(jsonBody(refreshed).access_token as string).aud).toBe(MCP);
    // The grant carries the device's resources: a refresh cannot widen to another allowed one.
    const widened = await refreshDevice(sentinel, jsonBody(refreshed).refresh_token as string, { resource: OTHER });
    expect([widened.status, jsonBody(widened).error]).toEqual([400, 'invalid_target']);
  });

  it('lets the poll narrow to one of the resources asked for', async () => {
    const { sentinel } = resourceSentinel();
    const codes = jsonBody(await askCodes(sentinel, [MCP, OTHER])) as { device_code: string; user_code: string };
    await personDecides(sentinel, codes.user_code, 'approve');
    advanceClock(6);
    const tokens = await poll(sentinel, codes.device_code, { resource: OTHER });
    expect(tokens.status, String(tokens.body)).toBe(200);
    expect(decodeJwt(jsonBody(tokens).access_token as string).aud).toBe(OTHER);
  });

  it('refuses a resource the app may not ask for, or a malformed one, before any code exists', async () => {
    const { sentinel, events } = resourceSentinel();
    for (const resource of [ELSEWHERE, '/relative/mcp', `${MCP}#fragment`]) {
      const refused = await askCodes(sentinel, [resource]);
      expect([refused.status, jsonBody(refused).error], resource).toEqual([400, 'invalid_target']);
      // The client's text is not echoed back.
      expect(String(jsonBody(refused).error_description)).not.toContain(resource);
    }
    expect(events.filter((event) => event.type === 'device.authorized')).toEqual([]);
  });

  it('refuses a poll naming a resource the device did not ask for, and keeps the device code', async () => {
    const { sentinel } = resourceSentinel();
    const codes = jsonBody(await askCodes(sentinel, [MCP])) as { device_code: string; user_code: string };
    await personDecides(sentinel, codes.user_code, 'approve');
    advanceClock(6);
    const refused = await poll(sentinel, codes.device_code, { resource: OTHER });
    expect([refused.status, jsonBody(refused).error]).toEqual([400, 'invalid_target']);
    // Nothing was spent: the same code with no resource still gets the tokens, for the resource asked for.
    const tokens = await poll(sentinel, codes.device_code);
    expect(tokens.status, String(tokens.body)).toBe(200);
    expect(decodeJwt(jsonBody(tokens).access_token as string).aud).toBe(MCP);
    expect(await pollError(sentinel, codes.device_code)).toBe('invalid_grant');
  });

  it('keeps the account audience when no resource is asked for', async () => {
    const { sentinel } = resourceSentinel();
    const codes = await requestCodes(sentinel, { scope: 'openid' });
    await personDecides(sentinel, codes.user_code, 'approve');
    advanceClock(6);
    const tokens = await poll(sentinel, codes.device_code);
    expect(tokens.status, String(tokens.body)).toBe(200);
    const aud = decodeJwt(jsonBody(tokens).access_token as string).aud;
    expect([MCP, OTHER]).not.toContain(aud);
    expect(String(aud)).toContain(ACCOUNT);
  });
});
