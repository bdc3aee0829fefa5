/**
 * Audit events carry decoded request values (the account id of the path, client ids, usernames); control
 * characters in them are escaped so that a text logger cannot be made to write forged lines.
 */
import { describe, expect, it } from 'vitest';
import type { AppStore, SentinelEvent } from '../src/index.js';
import { escapeControlCharacters, escapeEventFields } from '../src/events/event-fields.js';
import { openLogin, postForm, postLogin, startInteraction } from './helpers/direct-flow.js';
import { ccBody, makeSentinel, PASSWORD, USERNAME } from './helpers/fixtures.js';

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

describe('escapeControlCharacters', () => {
  it('writes CR, LF, NUL, DEL, C1 and the Unicode line separators as \\uXXXX text; leaves the rest alone', () => {
    expect(escapeControlCharacters('123456\r\nX-Injected: 1')).toBe('123456\\u000d\\u000aX-Injected: 1');
    expect(escapeControlCharacters('a\u0000b\u007fc\u0085d\u2028e\u2029')).toBe('a\\u0000b\\u007fc\\u0085d\\u2028e\\u2029');
    expect(escapeControlCharacters('Zoë 名前 ok')).toBe('Zoë 名前 ok');
  });

  it('escapes string fields and strings in arrays, keeps numbers', () => {
    expect(escapeEventFields({ at: 1, accountId: 'a\nb', scopes: ['x\ty'] })).toEqual({
      at: 1,
      accountId: 'a\\u000ab',
      scopes: ['x\\u0009y'],
    });
  });
});

describe('events from hostile requests', () => {
  // A made-up account's refusals are not audited (src/http/denied-accounts.ts): a host registry that claims every
  // account exists is the one way such an id reaches onEvent, and it must arrive escaped.
  it('a path account id with CR LF reaches onEvent escaped', async () => {
    const events: SentinelEvent[] = [];
    const appStore: AppStore = { findApp: () => null, hasAccount: () => true };
    const sentinel = makeSentinel({ apps: [], appStore, onEvent: (event) => events.push(event) });
    const response = await postForm(sentinel, `/sentinel/api/account/${encodeURIComponent('123456\r\nX-Injected: 1')}/token`, ccBody());
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) for (const value of Object.values(event)) if (typeof value === 'string') expect(value).not.toMatch(CONTROL);
    expect(events.some((event) => event.accountId === '123456\\u000d\\u000aX-Injected: 1')).toBe(true);
  });

  // onError hears the path's account id of a failed request, whatever it is: escaped as in events, and bounded.
  it('a path account id with CR LF, or of kilobytes, reaches onError escaped and cut to 256 characters', async () => {
    const contexts: { route: string; accountId?: string | undefined }[] = [];
    const appStore: AppStore = {
      findApp: () => {
        throw new Error('registry down');
      },
      hasAccount: () => true,
    };
    const sentinel = makeSentinel({ apps: [], appStore, onError: (_error, context) => contexts.push(context) });
    for (const accountId of ['123456\r\nX-Injected: 1', `${'a'.repeat(300)}\n`]) {
      const response = await postForm(sentinel, `/sentinel/api/account/${encodeURIComponent(accountId)}/token`, ccBody());
      expect(response.status).toBe(500);
    }
    expect(contexts.map((context) => context.route)).toEqual(['token', 'token']);
    expect(contexts[0]?.accountId).toBe('123456\\u000d\\u000aX-Injected: 1');
    expect(contexts[1]?.accountId).toBe(`${'a'.repeat(256)}…`);
  });

  it('a username with a line break is escaped in login.succeeded', async () => {
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel({
      onEvent: (event) => events.push(event),
      users: { authenticate: ({ password }) => (password === PASSWORD ? { id: 'u-1' } : null) },
    });
    const { interaction } = await startInteraction(sentinel);
    const csrf = await openLogin(sentinel, interaction);
    const response = await postLogin(sentinel, interaction, { csrf_token: csrf, username: `${USERNAME}\nroot`, password: PASSWORD });
    expect(response.status).toBe(303);
    const succeeded = events.find((event) => event.type === 'login.succeeded');
    expect(succeeded).toMatchObject({ username: `${USERNAME}\\u000aroot` });
  });
});
