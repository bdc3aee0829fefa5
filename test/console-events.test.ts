/**
 * The console's audit events: a throwing `onEvent` on `console.denied` answers the console's own 500 page (its
 * cause to `onError`), every refusal emits `console.denied` naming its target, and the registry's own events for
 * the console's app changes and for the console client a sign-in registers.
 */
import { describe, expect, it } from 'vitest';
import { createConsole } from '../src/console/index.js';
import type { SentinelEvent, SentinelRequest, SentinelResponse } from '../src/index.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';

function request(method: string, path: string, init: { cookie?: string; form?: Record<string, string> } = {}): SentinelRequest {
  return {
    method,
    path,
    query: new URLSearchParams(),
    headers: {
      ...(init.cookie === undefined ? {} : { cookie: init.cookie }),
      ...(init.form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    body: init.form === undefined ? undefined : new URLSearchParams(init.form).toString(),
  };
}

/** A console over a service whose `onEvent` records, and throws on the types in `vetoed`. */
function harness(vetoed: readonly string[] = []) {
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  const sentinel = makeSentinel({
    onEvent: (event) => {
      events.push(event);
      if (vetoed.includes(event.type)) throw new Error(`audit sink down (${event.type})`);
    },
    onError: (error) => {
      errors.push(error);
    },
  });
  const roles: { current: 'admin' | 'viewer' | null } = { current: 'admin' };
  const operatorConsole = createConsole(sentinel, { authorize: () => roles.current });
  const handle = async (input: SentinelRequest) => (await operatorConsole.handle(input)) as SentinelResponse;
  return { sentinel, events, errors, roles, handle };
}

describe('console: a throwing onEvent on console.denied', () => {
  it("answers the console's 500 page with its headers, and onError hears the hook", async () => {
    const h = harness(['console.denied']);
    const response = await h.handle(request('POST', `/console/${ACCOUNT}/apps`, { form: { csrf: 'x' } }));
    expect(response.status).toBe(500);
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(response.body).not.toContain('audit sink down');
    expect(h.errors.map(String)).toEqual(['Error: audit sink down (console.denied)']);
  });
});
