/**
 * Values that may or may not be promises. Interfaces a host implements (AppStore, hooks) may answer synchronously;
 * awaiting a plain value still costs a promise and a microtask, so the hot paths await only what is pending.
 */

/** Whether `value` is a promise or another thenable. */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<T>).then === 'function';
}

/**
 * Gives a rejection of `value` to `onRejected` (by default drops it) when `value` is a thenable; does nothing
 * otherwise. A host's hook typed `=> void` may still be an async function (TypeScript accepts one), and the promise
 * it returns, left alone, would reject unhandled and end the host's process. A synchronous throw stays the caller's.
 *
 * @example
 * try {
 *   catchRejection(config.onError?.(error, { route, accountId }));
 * } catch {
 *   // a throwing onError must not crash the host either
 * }
 */
export function catchRejection(value: unknown, onRejected: (reason: unknown) => void = ignore): void {
  if (isThenable(value)) value.then(undefined, onRejected);
}

function ignore(): void {}
