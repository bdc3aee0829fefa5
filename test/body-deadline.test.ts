/**
 * Bodies that fail by the client's doing, through every host: a body trickled byte by byte is answered 408 once
 * `bodyTimeout` passes (instead of being held until the host's 300 s timeout), and a client that drops the
 * connection mid-body is not reported to `onError` as a server failure. Also the fetch adapter's one-time warning
 * when it has no way to learn the client address.
 */
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../src/index.js';
import { toFetch } from '../adapters/fetch/index.js';
import { appTokenPath, makeSentinel } from './helpers/fixtures.js';
import { HOSTS, type Host, type MountedHost } from './helpers/hosts.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.on('error', reject);
  });
}

function head(length: number): string {
  return (
    `POST ${appTokenPath()} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
    `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${length}\r\n\r\n`
  );
}

// The hosts run side by side: each test waits on its own socket and timer, so together they take as long as one.
describe.concurrent('bodies through each host', () => {
  async function mount(host: Host): Promise<{ mounted: MountedHost; errors: unknown[] }> {
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ bodyTimeout: 0.5, onError: (error) => errors.push(error) });
    const mounted = await host.mount(sentinel, { onHostError: (error) => errors.push(error) });
    return { mounted, errors };
  }

  for (const host of HOSTS) {
    it(`${host.name}: a body trickled one byte at a time gets 408 after bodyTimeout, and the connection is closed`, async ({ expect }) => {
      const { mounted, errors } = await mount(host);
      try {
        const socket = await open(mounted.url);
        let answer = '';
        let closed = false;
        socket.on('data', (chunk: Buffer) => {
          answer += chunk.toString('latin1');
        });
        socket.on('close', () => {
          closed = true;
        });
        const started = Date.now();
        socket.write(head(200));
        for (let index = 0; index < 40 && answer === '' && !closed; index += 1) {
          socket.write('g');
          await sleep(100);
        }
        while (!closed && Date.now() - started < 5_000) await sleep(20);
        socket.destroy();
        expect(answer).toMatch(/^HTTP\/1\.1 408 /);
        expect(answer.toLowerCase()).toContain('x-content-type-options: nosniff');
        expect(Date.now() - started).toBeLessThan(3_000);
        expect(closed).toBe(true);
        expect(errors).toEqual([]);
      } finally {
        await mounted.close();
      }
    });
  }

  for (const host of HOSTS) {
    it(`${host.name}: a client that drops the connection mid-body is not reported as a server failure`, async ({ expect }) => {
      const { mounted, errors } = await mount(host);
      try {
        const socket = await open(mounted.url);
        socket.write(`${head(200)}grant_type=client_cre`);
        await sleep(100);
        socket.destroy();
        await sleep(400);
        expect(errors).toEqual([]);
        expect((await fetch(`${mounted.url}/host/ping`)).status).toBe(200);
      } finally {
        await mounted.close();
      }
    });
  }
});

describe('bodyTimeout option', () => {
  it('defaults to 10 seconds and refuses non-positive or over 300', () => {
    expect(makeSentinel().config.bodyTimeout).toBe(10);
    for (const bodyTimeout of [0, -1, 301, Number.NaN]) expect(() => makeSentinel({ bodyTimeout })).toThrow(ConfigurationError);
  });
});

describe('the fetch adapter without an ip option', () => {
  it('warns once per sentinel at startup, and not when ip is given', () => {
    const warnings: string[] = [];
    const sentinel = makeSentinel({ logger: { warn: (message) => warnings.push(message) } });
    // Only what toFetch says counts here (createSentinel may warn about its keys).
    warnings.length = 0;
    toFetch(sentinel);
    toFetch(sentinel, { mountPath: '/idp' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('ip');
    const other: string[] = [];
    const withIp = makeSentinel({ logger: { warn: (message) => other.push(message) } });
    other.length = 0;
    toFetch(withIp, { ip: () => '203.0.113.1' });
    expect(other).toEqual([]);
  });
});
