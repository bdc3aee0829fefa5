/**
 * The fetch adapter without its `ip` option: a `Request` carries no client address, so every request counts as from
 * one unknown address. The login throttle then counts per username only, but the bounds on what anyone can store
 * (sign-ins started, parked posts, logout confirmations, public pushes and device authorizations, registrations) are
 * shared by every client of the service: the startup warning must say so, not only that login throttling is off.
 */
import { describe, expect, it } from 'vitest';
import { toFetch } from '../adapters/fetch/index.js';
import { ACCOUNT, CLIENT_ID, makeSentinel, REDIRECT_URI } from './helpers/fixtures.js';

function authorizeURL(state: string): string {
  const query = new URLSearchParams({ response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, scope: 'openid', state });
  return `http://localhost/sentinel/api/account/${ACCOUNT}/authorize?${query}`;
}

describe('the fetch adapter without an ip option', () => {
  it('counts every client against one shared interaction bound, and its warning says so', async () => {
    const warnings: string[] = [];
    const sentinel = makeSentinel({ interactionsPerAddress: 2, logger: { warn: (message) => warnings.push(message) } });
    // Only what toFetch says counts here (createSentinel may warn about its keys).
    warnings.length = 0;
    const idp = toFetch(sentinel);
    // Three browsers of three people: without an address they are one client to every per-address bound.
    const answers = [];
    for (const state of ['first', 'second', 'third']) answers.push(await idp(new Request(authorizeURL(state))));
    const third = new URL(answers[2]?.headers.get('location') ?? '', 'http://localhost');
    expect(answers.map((answer) => answer?.status)).toEqual([302, 302, 302]);
    expect(third.origin + third.pathname).toBe(REDIRECT_URI);
    expect(third.searchParams.get('error')).toBe('temporarily_unavailable');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('ip');
    expect(warnings[0]).toContain('interactionsPerAddress');
    expect(warnings[0]).toContain('shared by every client');
  });
});
