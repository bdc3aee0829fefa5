/**
 * The audit page: the account's events, newest first, filtered by type, app and time, one bounded page at a time
 * (a cursor to the next). From the durable event log when the host gave one; else this instance's recent events,
 * which the page says.
 */
import type { SentinelEvent, SentinelEventType } from '../events/sentinel-event.js';
import type { SentinelResponse } from '../http/messages.js';
import { escapeHTML } from '../authorize/pages/escape-html.js';
import type { ConsoleDeps } from './deps.js';
import type { EventQuery } from '../events/event-log.js';
import { accountPath, type ConsoleCall, consolePage, paragraph, shownTime, text } from './page.js';
import { ConsoleRefusal } from './refusal.js';

const PAGE_SIZE = 50;
/** Fields every event has, shown in their own columns rather than in the detail. */
const COLUMNS = new Set(['at', 'type', 'outcome', 'accountId']);

/**
 * The times a filter may name: years 1 to 9999. `Date` reaches 271821 BC, which no event store need hold
 * (PostgreSQL's timestamptz starts in 4714 BC), and no event is older than year 1 or newer than 9999.
 */
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

function parseTime(value: string | null, label: string): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  // `datetime-local` sends no zone; the page labels its fields UTC.
  const at = Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`);
  if (Number.isNaN(at) || value.length > 40) throw new ConsoleRefusal('invalid_input', { detail: `${label} is not a date and time` });
  if (at < EARLIEST || at > LATEST) throw new ConsoleRefusal('invalid_input', { detail: `${label} is not between the years 1 and 9999` });
  return at;
}

/**
 * The end of a "To" filter, exclusive: just past the whole of the last unit `value` names. The form sends minutes
 * (`datetime-local`), and "to 14:30" means through 14:30, so an event at 14:30:20 is in; a value with seconds ends
 * after its second, one with a fraction after its millisecond, a date alone after its day.
 */
function endOfTo(value: string | null, at: number | undefined): number | undefined {
  if (value === null || at === undefined) return at;
  const time = /[T ]\d\d:\d\d(:\d\d)?([.,]\d+)?/i.exec(value);
  if (time === null) return at + (/^\s*\d{4}-\d\d-\d\d\s*$/.test(value) ? 86_400_000 : 1);
  if (time[2] !== undefined) return at + 1;
  return at + (time[1] !== undefined ? 1000 : 60_000);
}

function filterValue(value: string | null, pattern: RegExp, label: string): string | undefined {
  const trimmed = (value ?? '').trim();
  if (trimmed === '') return undefined;
  if (trimmed.length > 200 || !pattern.test(trimmed)) throw new ConsoleRefusal('invalid_input', { detail: `${label} is not valid` });
  return trimmed;
}

function detail(event: SentinelEvent): string {
  return Object.entries(event)
    .filter(([name, value]) => !COLUMNS.has(name) && value !== undefined)
    .map(([name, value]) => `${name}=${Array.isArray(value) ? value.join(',') : String(value)}`)
    .join(' ');
}

/** `GET {account}/audit?type&client&from&to&cursor`. */
export async function auditPage(deps: ConsoleDeps, call: ConsoleCall): Promise<SentinelResponse> {
  const operator = call.operator;
  if (operator === undefined) throw new Error('audit page without an operator');
  const { query: params } = call.request;
  const type = filterValue(params.get('type'), /^[a-z_.]+$/, 'the event type') as SentinelEventType | undefined;
  const clientId = filterValue(params.get('client'), /^[\x21-\x7e]+$/, 'the client id');
  const since = parseTime(params.get('from'), 'From');
  const until = endOfTo(params.get('to'), parseTime(params.get('to'), 'To'));
  const cursor = filterValue(params.get('cursor'), /^[\w-]+$/, 'the cursor');
  const query: EventQuery = { accountId: operator.accountId, type, clientId, since, until, limit: PAGE_SIZE, cursor };
  const { events, next } = await deps.events.query(query);
  const source = deps.events.durable ? text(call, 'auditDurable') : text(call, 'auditMemory', { size: String(deps.bufferSize) });
  const value = (name: string): string => escapeHTML((params.get(name) ?? '').slice(0, 200));
  const filters = `<form method="get" action="${escapeHTML(accountPath(call, 'audit'))}" class="row" role="search">
<div><label for="type">${escapeHTML(text(call, 'typeLabel'))}</label><input id="type" name="type" value="${value('type')}" placeholder="console.changed"></div>
<div><label for="client">${escapeHTML(text(call, 'appLabel'))}</label><input id="client" name="client" value="${value('client')}"></div>
<div><label for="from">${escapeHTML(text(call, 'fromLabel'))}</label><input id="from" name="from" type="datetime-local" value="${value('from')}"></div>
<div><label for="to">${escapeHTML(text(call, 'toLabel'))}</label><input id="to" name="to" type="datetime-local" value="${value('to')}"></div>
<div class="actions"><button type="submit" class="secondary">${escapeHTML(text(call, 'filter'))}</button></div></form>`;
  const rows = events
    .map(
      (event) =>
        `<tr><td class="time">${escapeHTML(shownTime(event.at))}</td><td><code>${escapeHTML(event.type)}</code></td><td>${escapeHTML(event.outcome)}</td><td>${escapeHTML(detail(event))}</td></tr>`,
    )
    .join('\n');
  const table =
    events.length === 0
      ? paragraph(text(call, 'auditEmpty'))
      : `<div class="table"><table><caption>${escapeHTML(text(call, 'auditCaption'))}</caption>
<thead><tr><th scope="col">${escapeHTML(text(call, 'columnTime'))}</th><th scope="col">${escapeHTML(text(call, 'columnType'))}</th><th scope="col">${escapeHTML(text(call, 'columnOutcome'))}</th><th scope="col">${escapeHTML(text(call, 'columnDetail'))}</th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
  let more = '';
  if (next !== undefined) {
    const following = new URLSearchParams(params);
    following.set('cursor', next);
    more = `<p><a href="${escapeHTML(`${accountPath(call, 'audit')}?${following.toString()}`)}">${escapeHTML(text(call, 'next'))}</a></p>`;
  }
  return consolePage(deps.service.config, call, {
    title: text(call, 'auditTitle'),
    section: 'audit',
    content: `${paragraph(source, 'lead')}${filters}${table}${more}`,
  });
}
