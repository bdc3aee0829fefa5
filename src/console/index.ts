/**
 * `sentinel-idp/console`: the operator console. Mount it with the service's adapters:
 * `app.use(toExpress(createConsole(sentinel, { authorize })))`.
 * @packageDocumentation
 */
export { createConsole } from './console.js';
export type { SentinelConsole } from './console.js';
export type { ConsoleOperator, ConsoleOptions, ConsoleService, ConsoleSessionInfo, OperatorRole } from './service.js';
export { MemoryEventLog } from '../events/event-log.js';
export type { EventPage, EventQuery, EventSource } from '../events/event-log.js';
export type { ConsoleMessages } from './messages/console-messages.js';
export { CONSOLE_CATALOGUES } from './messages/console-locale.js';
export { CONSOLE_CLIENT_ID } from './sign-in.js';
