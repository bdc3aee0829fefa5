/**
 * The child span of one signature (`sentinel sign`): signing is the costliest step of issuing a token, and with the
 * thread pool it can queue, so it gets its own timing in a trace. Only the algorithm and token type are recorded.
 */
import { type Attributes, type Context, context, type Span, SpanStatusCode } from '@opentelemetry/api';
import { isThenable } from '../lib/thenable.js';
import { parentRecording, tracer, tracingActive } from './instruments.js';
import { telemetryFailed } from './telemetry-failure.js';

/** Attribute sets per algorithm and type, built once (a handful of algorithms, two token types). */
const ATTRIBUTES = new Map<string, Attributes>();

function signingAttributes(algorithm: string, type: string): Attributes {
  const key = `${algorithm} ${type}`;
  let attributes = ATTRIBUTES.get(key);
  if (attributes === undefined) {
    attributes = Object.freeze({ 'sentinel.signing.alg': algorithm, 'sentinel.token.typ': type });
    ATTRIBUTES.set(key, attributes);
  }
  return attributes;
}

/**
 * Runs `sign` inside a `sentinel sign` span, a child of `parent` (the request's context) or of the active context.
 * No span when the parent is not recorded (a trace the sampler dropped): it would not be recorded either. Not an
 * async function: a signature made here (`sign` returns a value) is returned as is, with the span already ended, and
 * a pending one gets one `then` to end the span, no promise more.
 * @example const signature = await traceSigning('ES256', 'at+jwt', () => signBytesInPool(key, data), context.traceContext);
 */
export function traceSigning<T>(algorithm: string, type: string, sign: () => T | Promise<T>, parent?: Context): T | Promise<T> {
  if (!tracingActive()) return sign();
  const parentContext = parent ?? context.active();
  if (!parentRecording(parentContext)) return sign();
  let span: Span;
  try {
    span = tracer().startSpan('sentinel sign', { attributes: signingAttributes(algorithm, type) }, parentContext);
  } catch (error) {
    // A throwing sampler or processor: the signature is made without its span.
    telemetryFailed(error);
    return sign();
  }
  const failed = (error: unknown): never => {
    endSpan(span, true);
    throw error;
  };
  let signing: T | Promise<T>;
  try {
    signing = sign();
  } catch (error) {
    return failed(error);
  }
  if (!isThenable(signing)) {
    endSpan(span, false);
    return signing;
  }
  return (signing as Promise<T>).then((signature) => {
    endSpan(span, false);
    return signature;
  }, failed);
}

/** Ends the span; a processor that throws must not take a signature already made (or the signer's own error) away. */
function endSpan(span: Span, failed: boolean): void {
  try {
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  } catch (error) {
    telemetryFailed(error);
  }
}
