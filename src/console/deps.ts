/** What the console's pages and actions share: the service, its collaborators, the options, the event source. */
import { requestContext, type SentinelContext } from '../http/context.js';
import type { SentinelRequest } from '../http/messages.js';
import type { EventSource } from '../events/event-log.js';
import type { ConsoleOptions, ConsoleService } from './service.js';

/** Everything a page or action of the console is built from, once per console. */
export interface ConsoleDeps {
  service: ConsoleService;
  context: SentinelContext;
  options: ConsoleOptions;
  events: EventSource;
  /** The in-memory buffer's size when the events are this instance's only. */
  bufferSize: number;
  /** The console session's lifetime in seconds: as long as a form of the session can be posted. */
  sessionTtl: number;
  /** How long the console session lasts without a request, in seconds (at most `sessionTtl`). */
  idleTtl: number;
}

/** The context of one request: its emitter carries the request's address and id. */
export function scopedContext(deps: ConsoleDeps, request: SentinelRequest): SentinelContext {
  return requestContext(deps.context, request);
}
