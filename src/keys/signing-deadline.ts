/**
 * The deadline of an external signer (a KMS, an HSM through `sentinel-idp/pkcs11`): one that stops answering (a
 * network partition, a throttled KMS, a wedged token) would otherwise hold every token request until the host's
 * HTTP timeout, each with its socket, and let the signatures waiting on it pile up without end.
 */
// From node:timers, not the global: a host's tests that fake the global timers must not stall every signature.
import { clearTimeout, setTimeout } from 'node:timers';

/** Default of `signingTimeout` (seconds): far above a KMS's usual tens of milliseconds, below an HTTP timeout. */
export const DEFAULT_SIGNING_TIMEOUT_SECONDS = 10;

/**
 * What `start` resolves to, or a rejection once `timeoutMs` have passed without an answer; then the signal given to
 * `start` aborts, so a signer may drop work not started yet. A late answer is dropped: its rejection is handled here
 * (no unhandled rejection), and its signature goes nowhere, so no token is made of it.
 * @example const signature = await withSigningDeadline((signal) => signer.sign(data, { signal }), 10_000, signer.kid);
 */
export function withSigningDeadline<T>(start: (signal: AbortSignal) => Promise<T> | T, timeoutMs: number, kid: string): Promise<T> {
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`the external signer of kid ${kid} did not answer within ${timeoutMs} ms`));
      controller.abort();
    }, timeoutMs);
    // The timer alone must not keep a process alive that has nothing else to do.
    timer.unref();
    // A signer that throws synchronously, or answers without a promise, is bounded and reported all the same.
    new Promise<T>((settle) => settle(start(controller.signal))).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
