/**
 * The page after the console's *Sign out*. It ends the console session only: the device session the operator signed
 * in through is the service's, shared with the account page and the apps of that browser, and it stays. So those apps,
 * and the next sign-in to the console (the page's own link) while the device session's sign-in is younger than
 * `idleTtl`, ask for no password; on a shared computer that is the next person's. The page says so and offers to end that session too: a form to the account's logout endpoint, like the
 * account page's *Sign out* (same origin, so the endpoint's cross-site check lets it through), which ends the console
 * sessions that came from it as well.
 */
import { escapeHTML } from '../authorize/pages/escape-html.js';
import type { SentinelResponse } from '../http/messages.js';
import { routeUrl } from '../http/route-paths.js';
import type { ConsoleDeps } from './deps.js';
import { CONSOLE_COOKIE, consoleCookie } from './operator-session.js';
import { type ConsoleCall, consolePage, paragraph, text } from './page.js';
import type { ConsoleLocation } from './sign-in.js';

/**
 * The signed-out page, with the console cookie removed. `accountId`: the account of the session just ended, or the
 * one the Sign out form names when the session had ended already (its idle timeout), whose device session the page
 * offers to end; `undefined` when neither names one.
 *
 * @example return signedOutPage(deps, call, location, stored?.accountId);
 */
export function signedOutPage(
  deps: ConsoleDeps,
  call: ConsoleCall,
  location: ConsoleLocation,
  accountId: string | undefined,
): SentinelResponse {
  const config = deps.service.config;
  const service =
    accountId === undefined
      ? ''
      : `${paragraph(text(call, 'signedOutServiceLead'))}
<form method="post" action="${escapeHTML(routeUrl(config, 'logout', { accountId }))}"><div class="actions"><button type="submit" class="primary">${escapeHTML(text(call, 'signOutService'))}</button></div></form>`;
  return consolePage(config, call, {
    title: text(call, 'signedOutTitle'),
    content: `${paragraph(text(call, 'signedOutLead'), 'lead')}${service}<p><a href="${escapeHTML(`${call.base}/`)}">${escapeHTML(text(call, 'signInAgain'))}</a></p>`,
    headers: { 'set-cookie': consoleCookie(CONSOLE_COOKIE, '', location.base, location.secure, 0) },
  });
}
