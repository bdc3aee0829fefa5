/**
 * The child span of one signature (`sentinel sign`): signing is the costliest step of issuing a token, and with the
 * thread pool it can queue, so it gets its own timing in a trace. Only the algorithm and token type are recorded.
 */
import { type Context, context, SpanStatusCode } from '@opentelemetry/api';
import { tracer, tracingActive } from './instruments.js';

/**
 * Runs `sign` inside a `sentinel sign` span, a child of `parent` (the request's context) or of the active context.
 * @example const signature = await traceSigning('ES256', 'at+jwt', () => signBytesInPool(key, data), context.traceContext);
 */
export async function traceSigning<T>(algorithm: string, type: string, sign: () => T | Promise<T>, parent?: Context): Promise<T> {
  if (!tracingActive()) return sign();
  const attributes = { 'sentinel.signing.alg': algorithm, 'sentinel.token.typ': type };
  const span = tracer().startSpan('sentinel sign', { attributes }, parent ?? context.active());
  try {
    return await sign();
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}
