/**
 * The signing deadline (`signingTimeout`) of external signers: a KMS or HSM that stops answering fails the token
 * request with 500 server_error, reported to onError, nothing issued; a late answer is dropped without an unhandled
 * rejection and makes no token.
 */
import { generateKeyPairSync, sign as nodeSign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ExternalSigner, JWK } from '../src/index.js';
import { call } from './helpers/direct-flow.js';
import { appTokenPath, basic, CLIENT_ID, CLIENT_SECRET, makeSentinel } from './helpers/fixtures.js';

/** A KMS-like signer whose answers are held until the test releases them. */
function stalledSigner() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const pending: { data: Uint8Array; resolve: (signature: Uint8Array) => void; reject: (error: Error) => void }[] = [];
  const signer: ExternalSigner = {
    kid: 'stalled-kms',
    alg: 'ES256',
    publicJwk: publicKey.export({ format: 'jwk' }) as JWK,
    sign: (data) => new Promise((resolve, reject) => pending.push({ data, resolve, reject })),
  };
  const answer = (index: number) => {
    const entry = pending[index];
    if (entry === undefined) throw new Error('no such signature request');
    entry.resolve(nodeSign('sha256', entry.data, { key: privateKey, dsaEncoding: 'ieee-p1363' }));
  };
  return { signer, pending, answer };
}

async function requestToken(sentinel: ReturnType<typeof makeSentinel>) {
  const response = await call(sentinel, {
    method: 'POST',
    path: appTokenPath(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    body: 'grant_type=client_credentials',
  });
  return { status: response.status, body: JSON.parse(response.body as string) as Record<string, unknown> };
}

describe('signingTimeout: an external signer that stops answering', () => {
  it('fails the request with 500 server_error, reported, no token; a late answer is dropped', async () => {
    const { signer, pending, answer } = stalledSigner();
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ keys: [{ signer }], signingTimeout: 0.05, onError: (error) => errors.push(error) });
    const { status, body } = await requestToken(sentinel);
    expect(status).toBe(500);
    expect(body.error).toBe('server_error');
    expect(body.access_token).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(String((errors[0] as Error).message)).toContain('did not answer within 50 ms');
    // The answer arrives after the deadline: nothing more is reported and nothing is issued from it.
    expect(pending).toHaveLength(1);
    answer(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toHaveLength(1);
  });

  it('aborts the signal given to the signer at the deadline, so work not started yet can be dropped', async () => {
    const { signer } = stalledSigner();
    const signals: AbortSignal[] = [];
    const watching: ExternalSigner = {
      ...signer,
      sign: (data, options) => {
        if (options?.signal !== undefined) signals.push(options.signal);
        return signer.sign(data, options);
      },
    };
    const sentinel = makeSentinel({ keys: [{ signer: watching }], signingTimeout: 0.05, onError: () => {} });
    expect((await requestToken(sentinel)).status).toBe(500);
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
  });

  it('drops a late rejection without an unhandled rejection', async () => {
    const { signer, pending } = stalledSigner();
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ keys: [{ signer }], signingTimeout: 0.05, onError: (error) => errors.push(error) });
    expect((await requestToken(sentinel)).status).toBe(500);
    pending[0]?.reject(new Error('KMS: throttled'));
    // vitest fails the run on an unhandled rejection; give it the turns to surface one.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toHaveLength(1);
  });

  it('a signer answering in time still issues, and the option is checked', async () => {
    const { signer, pending, answer } = stalledSigner();
    const sentinel = makeSentinel({ keys: [{ signer }], signingTimeout: 30 });
    const answering = requestToken(sentinel);
    while (pending.length === 0) await new Promise((resolve) => setImmediate(resolve));
    answer(0);
    const { status, body } = await answering;
    expect(status).toBe(200);
    expect(typeof body.access_token).toBe('string');
    for (const signingTimeout of [0, -1, 61, '5' as unknown as number]) {
      expect(() => makeSentinel({ keys: [{ signer }], signingTimeout }), String(signingTimeout)).toThrow(/signingTimeout/);
    }
  });
});
