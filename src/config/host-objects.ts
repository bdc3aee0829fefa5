/**
 * The options that are the host's code rather than data: its functions, its user service, its stores and its logger.
 * zod can only check their shape (a function, an object with the right methods), so each refusal names what is missing.
 */
import { z } from 'zod';
import type { AppStore } from '../apps/app.js';
import type { UserAuthenticator } from '../hooks.js';
import { type KeysOf, refuseUnknownKeys } from '../lib/strict-options.js';
import { catchRejection } from '../lib/thenable.js';
import type { Store } from '../stores/store.js';

/** Where the service writes its warnings (the `logger` option). */
export interface ServiceLogger {
  /** Receives one warning line. */
  warn(message: string): void;
}

/** A hook option: any function, refused with `name` when it is something else. */
export function fn<T>(name: string) {
  return z.custom<T>((value) => typeof value === 'function', { message: `${name} must be a function` });
}

/** The methods of {@link AppStore}; `satisfies` keeps the list complete when the interface gains one. */
const APP_STORE_METHODS = {
  findApp: true,
  hasAccount: true,
  saveApp: true,
  listApps: true,
  updateApp: true,
  patchApp: true,
  deleteApp: true,
  rotateClientSecret: true,
  disableApp: true,
  enableApp: true,
  findDisabledApp: true,
  findTrustedIssuers: true,
} satisfies KeysOf<AppStore>;

/**
 * Refuses a host object that lacks a method of `required`, or has one of `methods` that is no function. The service
 * calls the required ones on every request that needs them and feature-tests the optional ones by their presence,
 * so either mistake would let it start and then answer those requests with a 500. Other members are the host's own.
 */
function refuseMissingMethods<T extends object>(methods: Record<keyof T, true>, required: readonly (keyof T)[], message: string) {
  return (value: T, context: z.RefinementCtx): void => {
    for (const name of Object.keys(methods) as (keyof T & string)[]) {
      const method: unknown = value[name];
      if (typeof method === 'function' || (method === undefined && !required.includes(name))) continue;
      context.addIssue({
        code: 'custom',
        message: required.includes(name) ? `${message} (${name} is missing)` : `${name} must be a function when given`,
      });
      return;
    }
  };
}

/** The `appStore` option: `findApp()` and `hasAccount()`, and each optional method it has a function. */
export const appStoreSchema = z
  .custom<AppStore>((v) => typeof v === 'object' && v !== null, { message: 'must implement findApp() and hasAccount()' })
  .superRefine(refuseMissingMethods<AppStore>(APP_STORE_METHODS, ['findApp', 'hasAccount'], 'must implement findApp() and hasAccount()'))
  .optional();

// Every key of `users`; `satisfies` keeps the list complete when UserAuthenticator gains a hook.
const USER_AUTHENTICATOR_KEYS = {
  authenticate: true,
  claims: true,
  passkeys: true,
  totpSecret: true,
  recover: true,
} satisfies KeysOf<UserAuthenticator>;

/** The `users` option. */
export const usersSchema = z
  .custom<UserAuthenticator>(
    (v) =>
      typeof v === 'object' &&
      v !== null &&
      typeof (v as UserAuthenticator).authenticate === 'function' &&
      ['undefined', 'function'].includes(typeof (v as UserAuthenticator).claims),
    { message: 'must have an authenticate() function (and claims, if given, must be a function)' },
  )
  // The host's user service may carry its own members (addUser, a db handle): only a near miss of a hook
  // (`totpSecert`, which would silently switch the second factor off) is refused. Class instances are not checked.
  .superRefine(refuseUnknownKeys(USER_AUTHENTICATOR_KEYS, 'nearMisses'))
  .transform(boundUserHooks)
  .optional();

/**
 * The host's user service with each hook bound to it. A service written as a class reaches its state through
 * `this`, and some call sites take a hook off the object before calling it (to test that it exists first); bound
 * once here, every call, present and future, runs on the host's object. The view inherits from the host's object,
 * so its other members (`passkeys`, whose methods are always called on it) read through unchanged.
 */
function boundUserHooks(users: UserAuthenticator): UserAuthenticator {
  const bound = Object.create(users) as UserAuthenticator;
  for (const key of Object.keys(USER_AUTHENTICATOR_KEYS) as (keyof UserAuthenticator)[]) {
    const hook: unknown = users[key];
    if (typeof hook === 'function') Object.defineProperty(bound, key, { value: hook.bind(users), enumerable: true });
  }
  return bound;
}

// Every method of Store; `satisfies` keeps the list complete when the interface gains one.
const STORE_METHODS = {
  get: true,
  set: true,
  take: true,
  delete: true,
  increment: true,
  swap: true,
  decrement: true,
  ready: true,
  enqueueJobs: true,
  claimJobs: true,
  settleJob: true,
} satisfies KeysOf<Store>;

const STORE_INTERFACE = 'must implement the Store interface (get, set, take, delete, increment, swap)';

/** The `store` option: every method of the Store interface, and each optional one it has a function. */
export const storeSchema = z
  .custom<Store>((v) => typeof v === 'object' && v !== null, { message: STORE_INTERFACE })
  .superRefine(refuseMissingMethods<Store>(STORE_METHODS, ['get', 'set', 'take', 'delete', 'increment', 'swap'], STORE_INTERFACE))
  .optional();

/** The `logger` option. */
export const loggerSchema = z
  .custom<ServiceLogger>((v) => typeof v === 'object' && v !== null && typeof (v as { warn?: unknown }).warn === 'function', {
    message: 'must have a warn(message) function',
  })
  // An async warn type-checks against `=> void`; the promise it returns, left alone, would end the host's process
  // with an unhandled rejection the first time it rejects. A warn that throws is dropped too: warnings are written
  // while requests are answered (a key set served stale), and a broken log stream must not turn the answer into a 500.
  .transform(
    (logger): ServiceLogger => ({
      warn: (message) => {
        try {
          catchRejection(logger.warn(message));
        } catch {
          // The host's logger failed; there is no one else to tell.
        }
      },
    }),
  )
  .optional();
