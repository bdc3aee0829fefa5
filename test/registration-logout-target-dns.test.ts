/**
 * The DNS check of a `backchannel_logout_uri` at dynamic registration (RFC 7591) and update (RFC 7592 PUT) is bounded
 * like every other outbound lookup made for a client: it answers within the fetch deadline (`clientJwks.timeoutMs`),
 * and it takes one of the process's few outbound lookup slots (src/client-assertion/outbound-lookups.ts). The lookup (`getaddrinfo`, in libuv's thread pool,
 * 4 threads by default) cannot be cancelled: a client naming hosts whose name server never answers held its request
 * open for as long as the resolver waited, and a few such requests at once (a PUT needs only the client's own
 * registration access token, and no registration slot) held every thread of the pool. The delivery resolves and
 * checks the URI again, pinned (src/logout/post-logout-token.ts), so a check skipped here lets nothing through.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

const lookups = vi.hoisted(() => ({ calls: [] as string[], settle: [] as (() => void)[] }));

vi.mock('node:dns/promises', async (importOriginal) =>
  (await import('./helpers/blackhole-dns.js')).blackholeDns(
    await importOriginal(),
    lookups,
    { 'internal.example': '10.0.0.7' },
    { recordOnlyBlackholes: true },
  ),
);

const { makeSentinel } = await import('./helpers/fixtures.js');
const { jsonOf } = await import('./helpers/direct-flow.js');
const { INITIAL_ACCESS_TOKEN, manageClient, postRegistration } = await import('./helpers/registration-client.js');

afterEach(() => {
  for (const settle of lookups.settle.splice(0)) settle();
  lookups.calls.length = 0;
});

function metadata(host: string): Record<string, unknown> {
  return {
    redirect_uris: ['https://app.example.com/cb'],
    backchannel_logout_uri: `https://${host}/logout`,
  };
}

/** The request's answer, or 'pending' when it has none after `ms`. */
async function within<T>(request: Promise<T>, ms: number): Promise<T | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), ms);
  });
  try {
    return await Promise.race([request, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('the backchannel_logout_uri check of a registration whose host name does not resolve in time', () => {
  it('answers within the fetch deadline, and keeps at most two such lookups in progress', async () => {
    const sentinel = makeSentinel({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN }, clientJwks: { timeoutMs: 200 } });
    const started = performance.now();
    const first = await within(postRegistration(sentinel, metadata('one.blackhole.example')), 2000);
    expect(first === 'pending' ? first : first.status).toBe(201);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    // An update, with the client's own token, while the first lookup still waits on the name server.
    const registered = jsonOf(first as Exclude<typeof first, 'pending'>);
    const update = { client_id: registered.client_id, ...metadata('two.blackhole.example') };
    const second = await within(manageClient(sentinel, 'PUT', registered as never, { body: update }), 2000);
    expect(second === 'pending' ? second : second.status).toBe(200);
    // A third while both still wait: it waits for one of the process's lookup slots no longer than the fetch deadline,
    // then registers with no lookup of its own (the delivery will check the URI, pinned).
    const quick = performance.now();
    const third = await within(postRegistration(sentinel, metadata('three.blackhole.example')), 2000);
    expect(third === 'pending' ? third : third.status).toBe(201);
    expect(performance.now() - quick).toBeLessThan(600);
    expect(lookups.calls).toEqual(['one.blackhole.example', 'two.blackhole.example']);
    // A name that resolves to a private address is still refused at registration, once a lookup is free.
    for (const settle of lookups.settle.splice(0)) settle();
    await new Promise((resolve) => setImmediate(resolve));
    const refused = await postRegistration(sentinel, metadata('internal.example'));
    expect(refused.status).toBe(400);
    expect(jsonOf(refused)).toMatchObject({ error: 'invalid_client_metadata' });
  });
});
