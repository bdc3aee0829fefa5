/**
 * The user part of a sid and of a user's index key (src/sessions/session-index.ts) is remembered for the users it was
 * last worked out for. Whether remembered or not, and after the map of them starts over, it must be the digest it
 * stands for: a sid issued before and one issued after must name the same index.
 */
import { describe, expect, it } from 'vitest';
import { digest } from '../src/lib/random-secrets.js';
import { sessionSid, userIndexKey, userPart } from '../src/sessions/session-index.js';

const expected = (accountId: string, userId: string): string => digest(`user-sessions\n${accountId}\n${userId}`).slice(0, 22);

describe('userPart', () => {
  it('is the digest of account and user, asked once or again, beyond the number it keeps', () => {
    const users = Array.from({ length: 2500 }, (_, i) => [`acct-${i % 3}`, `u-${i}`] as const);
    for (const [accountId, userId] of users) expect(userPart(accountId, userId)).toBe(expected(accountId, userId));
    for (const [accountId, userId] of users.slice().reverse()) expect(userPart(accountId, userId)).toBe(expected(accountId, userId));
  });

  it('tells apart users and accounts whose texts run together', () => {
    expect(userPart('1', '23')).not.toBe(userPart('12', '3'));
    expect(userPart('1', '23')).toBe(expected('1', '23'));
    expect(userPart('12', '3')).toBe(expected('12', '3'));
  });

  it('is what the sid and the index key carry', () => {
    const part = expected('123456', 'u-1');
    expect(sessionSid('123456', 'u-1', 'd'.repeat(43))).toBe(`${part}.${'d'.repeat(43)}`);
    expect(userIndexKey('123456', 'u-1')).toBe(`user-sessions:${part}`);
  });
});
