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
 * `signing`, or a rejection once `timeoutMs` have passed without an answer. A late answer is dropped: its rejection
 * is handled here (no unhandled rejection), and its signature goes nowhere, so no token is made of it.
 * @example const signature = await withSigningDeadline(signer.sign(data), 10_000, signer.kid);
 */
export function withSigningDeadline<T>(signing: Promise<T>, timeoutMs: number, kid: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`the external signer of kid ${kid} did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    // The timer alone must not keep a process alive that has nothing else to do.
    timer.unref();
    signing.then(
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
