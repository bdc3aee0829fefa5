/**
 * A refusal's event quotes why (`reason`, the error's description), and a description may quote what the request
 * sent. A host's body parser hands over any parameter names (`a[b]=1` makes a nested object under `a`): such a name
 * is quoted at most as long as any other quoted request value, in the answer and in the audit event.
 */
import { describe, expect, it } from 'vitest';
import type { SentinelEvent } from '../src/index.js';
import { ACCOUNT_PATH, AUTHORIZE_PATH, authorizeQuery, jsonOf, postForm } from './helpers/direct-flow.js';
import { makeSentinel, PUBLIC_CLIENT_ID } from './helpers/fixtures.js';

describe('refusals quoting a parameter name', () => {
  it('cuts a malformed parameter name a pushed authorization request quotes, in the answer and its token.denied', async () => {
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel({ onEvent: (event) => events.push(event) });
    const name = `x${'y'.repeat(50_000)}`;
    // As a host's extended parser hands over `xyyy…[a]=1`: a nested object, not text.
    const refused = await postForm(sentinel, `${ACCOUNT_PATH}/par`, { client_id: PUBLIC_CLIENT_ID, [name]: { a: '1' } } as never);
    expect(refused.status).toBe(400);
    const description = String(jsonOf(refused).error_description);
    expect(description).toMatch(/^parameter xy+\.\.\. is malformed$/);
    expect(description.length).toBeLessThan(300);
    const denied = events.filter((event) => event.type === 'token.denied');
    expect(denied).toHaveLength(1);
    expect(denied[0]).toMatchObject({ error: 'invalid_request', reason: description });
  });

  it('cuts one an authorization request posted as a form quotes, in its authorize.denied', async () => {
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel({ onEvent: (event) => events.push(event) });
    const name = `x${'y'.repeat(5_000)}`;
    const body = { ...Object.fromEntries(authorizeQuery()), [name]: { a: '1' } };
    expect((await postForm(sentinel, AUTHORIZE_PATH, body as never)).status).toBe(400);
    const denied = events.filter((event) => event.type === 'authorize.denied');
    expect(denied).toHaveLength(1);
    expect(denied[0]).toMatchObject({ error: 'invalid_request', reason: expect.stringMatching(/^parameter xy+\.\.\. is malformed$/) });
    expect((denied[0] as { reason: string }).reason.length).toBeLessThan(300);
  });
});
