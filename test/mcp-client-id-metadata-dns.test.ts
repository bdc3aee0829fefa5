/**
 * A client ID metadata document's fetch slot is held until the host name's DNS lookup has settled, not only until
 * the fetch deadline. The lookup (`getaddrinfo`, in libuv's thread pool, 4 threads by default) cannot be cancelled:
 * it goes on after the deadline has answered the client. Were the slot given back at the deadline, a sender naming
 * made-up hosts under a domain whose name server never answers would start `maxConcurrentFetches` more lookups per
 * deadline while the earlier ones still hold their threads, until every thread of the pool waited on DNS (and with
 * them every other lookup, file read and hash of the process).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

const lookups = vi.hoisted(() => ({ calls: [] as string[], settle: [] as (() => void)[] }));

vi.mock('node:dns/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:dns/promises')>();
  // A name server that does not answer until the test says so: the lookup outlives any fetch deadline.
  const lookup = (host: string) => {
    lookups.calls.push(host);
    return new Promise((_resolve, reject) => {
      lookups.settle.push(() => reject(Object.assign(new Error(`getaddrinfo EAI_AGAIN ${host}`), { code: 'EAI_AGAIN' })));
    });
  };
  return { ...actual, lookup, default: { ...actual, lookup } };
});

const { ClientIdMetadataResolver, DOCUMENT_UNAVAILABLE } = await import('../src/apps/client-id-metadata.js');
const { resolveConfig } = await import('../src/config.js');
const { ACCOUNT, baseOptions } = await import('./helpers/fixtures.js');

afterEach(() => {
  for (const settle of lookups.settle.splice(0)) settle();
  lookups.calls.length = 0;
});

function resolver(): InstanceType<typeof ClientIdMetadataResolver> {
  const errors: unknown[] = [];
  const config = resolveConfig(
    baseOptions({
      clientIdMetadataDocuments: { enabled: true, maxConcurrentFetches: 1 },
      clientJwks: { timeoutMs: 100 },
      onError: (error) => errors.push(error),
    }),
  );
  return new ClientIdMetadataResolver(config);
}

describe('a client ID metadata document whose host name does not resolve in time', () => {
  it('keeps its fetch slot until the lookup has settled, so lookups in progress stay within maxConcurrentFetches', async () => {
    const documents = resolver();
    const started = performance.now();
    await expect(documents.resolve(ACCOUNT, 'https://one.agents.example/client.json')).rejects.toMatchObject({
      code: 'invalid_client',
      description: DOCUMENT_UNAVAILABLE,
    });
    // Answered at the deadline, though the lookup goes on.
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
    expect(lookups.calls).toEqual(['one.agents.example']);
    // Another made-up host while that lookup still holds its thread: refused at once, with no lookup of its own.
    await expect(documents.resolve(ACCOUNT, 'https://two.agents.example/client.json')).rejects.toMatchObject({
      description: DOCUMENT_UNAVAILABLE,
    });
    expect(lookups.calls).toEqual(['one.agents.example']);
    // Once the name server answers (here: fails), the slot is back for the next document.
    for (const settle of lookups.settle.splice(0)) settle();
    await new Promise((resolve) => setImmediate(resolve));
    await expect(documents.resolve(ACCOUNT, 'https://three.agents.example/client.json')).rejects.toMatchObject({
      description: DOCUMENT_UNAVAILABLE,
    });
    expect(lookups.calls).toEqual(['one.agents.example', 'three.agents.example']);
  });
});
