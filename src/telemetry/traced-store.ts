/**
 * A decorator that observes whatever {@link Store} is configured: each method call becomes a child span
 * `sentinel store <method>` and lands in `sentinel.store.duration` (and `sentinel.store.errors` when it fails).
 *
 * A Proxy rather than a class implementing the interface, so methods a store has beyond the interface (or that the
 * interface gains later) are forwarded and observed too, and `this` inside the store stays the store itself (private
 * fields keep working). Only the method name is recorded: keys and values can hold digests of secrets.
 */
import { type Attributes, type Context, context, type Span, SpanStatusCode } from '@opentelemetry/api';
import type { Store } from '../stores/store.js';
import { isThenable } from '../lib/thenable.js';
import { ATTR, instruments, parentRecording, telemetryActive, tracer, tracingActive } from './instruments.js';
import { telemetryFailed } from './telemetry-failure.js';

type AnyFunction = (...args: unknown[]) => unknown;

/** Reads the store behind the proxy (health probes must not count as store traffic). */
const UNTRACED = Symbol('sentinel.untraced');

/** Attribute sets per store method, built once (a store has a fixed set of methods). */
const ATTRIBUTES = new Map<string, Attributes>();

function operationAttributes(operation: string): Attributes {
  let attributes = ATTRIBUTES.get(operation);
  if (attributes === undefined) {
    attributes = Object.freeze({ [ATTR.operation]: operation });
    ATTRIBUTES.set(operation, attributes);
  }
  return attributes;
}

/** The span of one store call, or none when the SDK throws (a sampler or processor of the host's): the call goes on. */
function startStoreSpan(operation: string, attributes: Attributes, parent: Context): Span | undefined {
  try {
    return tracer().startSpan(`sentinel store ${operation}`, { attributes }, parent);
  } catch (error) {
    telemetryFailed(error);
    return undefined;
  }
}

function observeCall(operation: string, parent: Context, call: () => unknown): unknown {
  const attributes = operationAttributes(operation);
  // No span without a tracer provider, or under a request span the sampler dropped; the metrics count every call.
  const span = tracingActive() && parentRecording(parent) ? startStoreSpan(operation, attributes, parent) : undefined;
  const started = performance.now();
  const finish = (error: unknown, failed: boolean): void => {
    // After the call: a throwing processor must not report a write that happened as failed, nor replace its error.
    try {
      const meters = instruments();
      meters.storeDuration.record((performance.now() - started) / 1000, attributes);
      if (failed) {
        meters.storeErrors.add(1, attributes);
        // The error's class only: messages of store clients can quote keys.
        span?.setAttribute('error.type', error instanceof Error ? error.name : typeof error);
        span?.setStatus({ code: SpanStatusCode.ERROR });
      }
      span?.end();
    } catch (failure) {
      telemetryFailed(failure);
    }
  };
  let result: unknown;
  try {
    result = call();
  } catch (error) {
    finish(error, true);
    throw error;
  }
  if (!isThenable(result)) {
    finish(undefined, false);
    return result;
  }
  return Promise.resolve(result).then(
    (value) => {
      finish(undefined, false);
      return value;
    },
    (error: unknown) => {
      finish(error, true);
      throw error;
    },
  );
}

/**
 * Wraps a store so every method call is traced and measured; everything else (properties, `in`, prototype) passes
 * through untouched. Spans are children of `parent` when given (a handled request's context), else of the active
 * context.
 *
 * @example
 * const store = traceStore(new RedisStore(redis));
 * await store.get('grant:abc'); // a span "sentinel store get" and one sentinel.store.duration sample
 */
export function traceStore<S extends Store>(store: S, parent?: Context): S {
  const wrappers = new Map<PropertyKey, { original: AnyFunction; wrapper: AnyFunction }>();
  return new Proxy(store, {
    get(target, property) {
      if (property === UNTRACED) return target;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'constructor') return value;
      const original = value as AnyFunction;
      const cached = wrappers.get(property);
      if (cached?.original === original) return cached.wrapper;
      const wrapper: AnyFunction = (...args) =>
        telemetryActive()
          ? observeCall(property, parent ?? context.active(), () => original.apply(target, args))
          : original.apply(target, args);
      wrappers.set(property, { original, wrapper });
      return wrapper;
    },
  });
}

/**
 * The store behind {@link traceStore}'s proxy (the store itself when it is not one).
 * @example untraced(context.store).get('health:probe') // no span, no metric
 */
export function untraced<S extends Store>(store: S): S {
  return ((store as unknown as Record<symbol, S | undefined>)[UNTRACED] ?? store) as S;
}
