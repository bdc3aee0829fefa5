/**
 * The console's two changes answered with a page rather than a redirect, registering an app and rotating its
 * secret, show a secret once on the page that answers the POST. Reloading that page, or coming back to it, sends
 * the POST again: a second app with a secret nobody sees, or a second rotation that (with no overlap) drops the
 * secret the operator has just copied. Their forms carry a random value of their own (`once`); the first POST that
 * presents it spends it, and a POST presenting it again is refused with nothing changed. The value costs nothing to
 * render: it is written only when spent, under its digest, as long as the console session (and so its CSRF token)
 * can live.
 */
import type { ParamMap } from '../http/params.js';
import { escapeHTML } from '../authorize/pages/escape-html.js';
import { digest, randomSecret } from '../lib/random-secrets.js';
import { countAnswered } from '../stores/counter-slot.js';
import type { Store } from '../stores/store.js';
import { ConsoleRefusal } from './refusal.js';

/** The form field. */
const FIELD = 'once';

/** A key of its own prefix: MemoryStore evicts per prefix, and only operators' changes write it. */
const onceKey = (value: string): string => `console-once:${digest(value)}`;

/**
 * The hidden field of a form whose POST must run once: a new random value on every render.
 *
 * @example `<form method="post" action="…">${csrfField(call)}${onceField()}…</form>`
 */
export function onceField(): string {
  return `<input type="hidden" name="${FIELD}" value="${escapeHTML(randomSecret())}">`;
}

/**
 * Runs `change` unless the form's `once` value was spent by an earlier POST; spends it first, and gives it back when
 * `change` fails (a refusal, an invalid input, a failing store), so that the same form can be sent again once fixed.
 *
 * @throws ConsoleRefusal `invalid_input` for a form without the value, `resubmitted` for a value spent already.
 * @example
 * return runOnce(deps.context.store, form, deps.sessionTtl, clientId, () => rotate());
 */
export async function runOnce<T>(
  store: Store,
  form: ParamMap,
  ttlSeconds: number,
  target: string | undefined,
  change: () => Promise<T>,
): Promise<T> {
  const values = form.get(FIELD);
  const value = values?.length === 1 ? values[0] : undefined;
  if (value === undefined || !/^[A-Za-z0-9_-]{16,100}$/.test(value)) {
    throw new ConsoleRefusal('invalid_input', { detail: 'the form is out of date; reload the page' });
  }
  const key = onceKey(value);
  if (countAnswered(await store.increment(key, ttlSeconds * 1000)) > 1) throw new ConsoleRefusal('resubmitted', { target });
  try {
    return await change();
  } catch (error) {
    try {
      await store.delete(key);
    } catch {
      // The change's own error is the one to answer; this form then stays spent, and a reload of the page is a new one.
    }
    throw error;
  }
}
