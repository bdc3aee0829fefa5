/**
 * Values that may or may not be promises. Interfaces a host implements (AppStore, hooks) may answer synchronously;
 * awaiting a plain value still costs a promise and a microtask, so the hot paths await only what is pending.
 */

/** Whether `value` is a promise or another thenable. */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<T>).then === 'function';
}
