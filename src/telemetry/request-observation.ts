/**
 * What the request span gives the rest of a request: its own module, so that the context and the emitter can name
 * it without depending on the span code (which depends on the router, which depends on the context).
 */
import type { Context, Span } from '@opentelemetry/api';
import type { EventInput } from '../events/sentinel-event.js';

/** What the handling of one request tells its span and metrics as it goes. */
export interface RequestObservation {
  readonly span: Span;
  /** The OpenTelemetry context holding the span: the parent of the request's child spans. */
  readonly traceContext: Context;
  /** The request id events carry (see `requestId()`). */
  readonly requestId: string | undefined;
  /** Notes the OAuth error code the request is answered with. */
  fail(code: string): void;
  /** Notes what an audit event of this request reveals (client, grant type). */
  annotate(event: EventInput): void;
  /**
   * Notes the grant type a token request asks for, as soon as it is read: refused and failed requests carry it too,
   * not only those that issue a token (whose `token.issued` event names it as well).
   */
  noteGrantType(grantType: string): void;
  /**
   * Notes that account `accountId` exists, as the request learnt it anyway (the app store answered for it, or a
   * record made for it was found): the path's account id becomes a metric attribute only then, so that made-up ids
   * in URLs cannot add time series.
   */
  noteAccount(accountId: string): void;
  /** Whether `accountId` is the request's own account and was noted to exist: only then is it a metric attribute. */
  knowsAccount(accountId: string): boolean;
  /**
   * Ends the span and records the request metrics, once, with the status the request is answered with: called by
   * the edge where the answer is settled, so that no promise is chained after the handler's only to learn it.
   */
  end(status: number): void;
}
