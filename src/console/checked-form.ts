/**
 * Reading a console form: the body under the service's `bodyTimeout`, then the session's CSRF token. The console is
 * no route of the service's edge, which gives every lazy body its deadline (src/http/edge.ts), so it gives its own
 * the same one: without it a form trickled one byte at a time held the request until the host's own timeout (300 s
 * on Node), where the service answers 408 after `bodyTimeout`.
 */
import { withBodyDeadline } from '../http/body-failures.js';
import { readForm } from '../http/form-body.js';
import type { ParamMap } from '../http/params.js';
import { digestsEqual } from '../lib/random-secrets.js';
import type { ConsoleDeps } from './deps.js';
import type { ConsoleCall } from './page.js';
import { ConsoleRefusal } from './refusal.js';

/**
 * Reads a POSTed form and checks its CSRF token against the session's (constant time). `read` sees the form first,
 * so a refusal of a forged one can still name the target it carries.
 *
 * @throws OAuthError of the form (408 for a body later than `bodyTimeout`, 413 for one too large); ConsoleRefusal
 * `csrf` for a missing or wrong token.
 * @example const form = await checkedForm(deps, call, operator);
 */
export async function checkedForm(
  deps: ConsoleDeps,
  call: ConsoleCall,
  session: { csrf: string },
  read?: (form: ParamMap) => void,
): Promise<ParamMap> {
  const { config } = deps.service;
  const { body } = call.request;
  const request =
    typeof body === 'function' ? { ...call.request, body: withBodyDeadline(body, Math.ceil(config.bodyTimeout * 1000)) } : call.request;
  const form = await readForm(request, config.bodyLimit);
  read?.(form);
  const presented = form.get('csrf')?.[0];
  if (presented === undefined || !digestsEqual(presented, session.csrf)) throw new ConsoleRefusal('csrf');
  return form;
}
