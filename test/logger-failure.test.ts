/**
 * The `logger` option is the host's, and a host's logger can throw (a closed stream, a transport that fails): a
 * warning the service writes while it answers a request must not change that answer, nor reach `onError`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { movableClock } from './helpers/clock.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { appTokenPath } from './helpers/fixtures.js';
import { assertionAuth, clientKey, keyedSentinel } from './helpers/key-bound.js';

const servers: Server[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** A key-set host serving `keys` until `fail(true)`, then answering 503. */
async function failingJwksServer(keys: unknown[]): Promise<{ url: string; fail: (down: boolean) => void }> {
  let failing = false;
  const server = createServer((_in, out) => {
    if (failing) out.writeHead(503).end();
    else out.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
  return { url, fail: (down) => (failing = down) };
}

describe('a logger that throws', () => {
  it('leaves a refused client assertion a 401 invalid_client when the stale-key-set warning throws, not a 500', async () => {
    const clock = movableClock();
    const key = await clientKey();
    const stranger = await clientKey();
    const jwks = await failingJwksServer([key.publicJwk]);
    const errors: unknown[] = [];
    let broken = false;
    const sentinel = keyedSentinel(
      key,
      { jwks: undefined, jwksUri: jwks.url },
      {
        clientJwks: { timeoutMs: 500, maxBytes: 65_536, cacheSeconds: 300, staleIfErrorSeconds: 600, allowPrivateAddresses: true },
        logger: {
          warn: () => {
            if (broken) throw new Error('the log stream is closed');
          },
        },
        onError: (error) => errors.push(error),
      },
    );
    const path = appTokenPath();
    const body = async (signer: typeof key) =>
      new URLSearchParams({ grant_type: 'client_credentials', ...(await assertionAuth(signer)) }).toString();
    expect((await postForm(sentinel, path, await body(key))).status).toBe(200);
    // The key host goes down and the set expires: the refetch for a kid the set lacks fails, and the service warns.
    jwks.fail(true);
    broken = true;
    await clock.advance(301_000);
    const refused = await postForm(sentinel, path, await body(stranger));
    expect(refused.status).toBe(401);
    expect(jsonOf(refused).error).toBe('invalid_client');
    // The client itself is still served from the stale set.
    expect((await postForm(sentinel, path, await body(key))).status).toBe(200);
    expect(errors).toEqual([]);
  });

  it('does not stop createSentinel when a startup warning throws (temporary keys)', async () => {
    const key = await clientKey();
    const warn = vi.fn(() => {
      throw new Error('the log stream is closed');
    });
    const sentinel = keyedSentinel(key, {}, { keys: undefined, logger: { warn } });
    expect(warn).toHaveBeenCalled();
    const body = new URLSearchParams({ grant_type: 'client_credentials', ...(await assertionAuth(key)) }).toString();
    expect((await postForm(sentinel, appTokenPath(), body)).status).toBe(200);
  });
});
