/**
 * What a failing OpenTelemetry SDK is allowed to do to the service: nothing. The API never throws, but the SDK calls
 * the host's own span processors (`onStart`, `onEnd`) and sampler synchronously, inside `startSpan()` and
 * `span.end()`, and passes their throws on. Left alone, a broken processor failed the request whose span it was
 * handed, after the work was done: a code already redeemed answered 500 (its retry is then a replay that revokes the
 * grant), a store write that succeeded reported as failed, a request whose answer was settled rejected out of the
 * edge. Every call the service makes into the SDK goes through a try/catch that reports here instead: to the
 * OpenTelemetry diagnostic logger, the place a host looks for its SDK's own troubles.
 */
import { diag } from '@opentelemetry/api';

/**
 * Reports a throw of the SDK (or of a processor or sampler the host registered in it) and drops it.
 *
 * @example
 * try { span.end(); } catch (error) { telemetryFailed(error); }
 */
export function telemetryFailed(error: unknown): void {
  try {
    diag.error('sentinel-idp: the OpenTelemetry SDK threw; the request goes on without it', error);
  } catch {
    // A throwing diagnostic logger leaves no one to tell.
  }
}
