/**
 * Thread-pool work dispatched in batches (src/keys/pool-batch.ts): nothing starts in the turn it is asked for, everything
 * asked for in one turn starts together, and each caller gets its own outcome.
 */
import { generateKeyPairSync, verify } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { signBytesInPool, type SigningKey } from '../src/keys/signing-keys.js';
import { inNextBatch } from '../src/keys/pool-batch.js';

describe('inNextBatch', () => {
  it('starts the work of one turn together, after the turn, and settles each promise with its own result', async () => {
    const started: number[] = [];
    const results = [1, 2, 3].map((n) =>
      inNextBatch<number>((resolve) => {
        started.push(n);
        setImmediate(() => resolve(n * 10));
      }),
    );
    expect(started).toEqual([]);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(started).toEqual([1, 2, 3]);
    await expect(Promise.all(results)).resolves.toEqual([10, 20, 30]);
  });

  it('a failing or throwing start rejects only its own promise', async () => {
    const outcomes = await Promise.allSettled([
      inNextBatch<string>((resolve) => resolve('ok')),
      inNextBatch<string>((_, reject) => reject(new Error('pool error'))),
      inNextBatch<string>(() => {
        throw new Error('thrown while dispatching');
      }),
      inNextBatch<string>((resolve) => resolve('also ok')),
    ]);
    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : (outcome.reason as Error).message))).toEqual([
      'ok',
      'pool error',
      'thrown while dispatching',
      'also ok',
    ]);
  });

  it('work asked for while a batch is dispatched goes into the next batch', async () => {
    const order: string[] = [];
    const inner: Promise<void>[] = [];
    await inNextBatch<void>((resolve) => {
      order.push('first');
      inner.push(
        inNextBatch<void>((done) => {
          order.push('second');
          done();
        }),
      );
      expect(order).toEqual(['first']);
      resolve();
    });
    await Promise.all(inner);
    expect(order).toEqual(['first', 'second']);
  });
});

describe('signBytesInPool', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('still signs while a test fakes the global timers', async () => {
    vi.useFakeTimers();
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key = { kid: 'k', alg: 'ES256', privateKey, publicKey } as unknown as SigningKey;
    const signature = await signBytesInPool(key, Buffer.from('x'));
    expect(verify('sha256', Buffer.from('x'), { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
  });

  it('signs many payloads of one turn, each signature verifying for its own payload', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key = { kid: 'k', alg: 'ES256', privateKey, publicKey } as unknown as SigningKey;
    const payloads = Array.from({ length: 12 }, (_, i) => Buffer.from(`payload ${i}`));
    const signatures = await Promise.all(payloads.map((data) => signBytesInPool(key, data)));
    payloads.forEach((data, i) => {
      expect(verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signatures[i] as Buffer)).toBe(true);
      expect(verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signatures[(i + 1) % 12] as Buffer)).toBe(false);
    });
  });
});
