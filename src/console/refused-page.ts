/**
 * The answer to a refused console request: the page saying why, and its `console.denied` event. The event is the
 * audit of an account: one with an operator is theirs; one refused before anyone signed in (a forged form, a sign-in
 * to a made-up account) names the account its address named, and is not emitted when the AppStore does not know that
 * account. Anyone can send such requests naming any number of made-up accounts, and an event each would be a row of
 * the append-only PostgreSQL log, or a slot of the in-memory ring pushing real accounts' events out, that no operator
 * can read (src/http/denied-accounts.ts, as at the service's endpoints).
 */
import { escapeHTML } from '../authorize/pages/escape-html.js';
import { isOAuthError } from '../errors.js';
import { isAccountId } from '../lib/account-id.js';
import { auditsAccount } from '../http/denied-accounts.js';
import type { SentinelResponse } from '../http/messages.js';
import { type ConsoleDeps, scopedContext } from './deps.js';
import { type ConsoleCall, consolePage, text, textHTML } from './page.js';
import { ConsoleRefusal, refusedAction, refusedTarget } from './refusal.js';

/** What a refused request was: its action, the target and account it named (when it named them). */
export interface RefusedAim {
  action: string;
  target?: string | undefined;
  /** The account of the address or form, for a request refused with no operator signed in. */
  account?: string | undefined;
  /** The user of the session a refused sign-out would have ended (no operator is signed in on that route). */
  operator?: string | undefined;
}

/**
 * The refusal an error stands for: a console refusal, or a malformed form (wrong type, too large, cut off), answered
 * with the form error's own status and headers (`413` and `Connection: close` for a body too large to read).
 *
 * @example const refusal = refusalOf(error); // undefined: the console's 500
 */
export function refusalOf(error: unknown): ConsoleRefusal | undefined {
  if (error instanceof ConsoleRefusal) return error;
  if (isOAuthError(error) && error.code !== 'server_error') {
    return new ConsoleRefusal('invalid_input', { detail: error.description, status: error.status, headers: error.headers });
  }
  return undefined;
}

/** The account a refusal's event goes to, or `undefined` for none the AppStore knows. */
async function auditedAccount(deps: ConsoleDeps, call: ConsoleCall, named: string | undefined): Promise<string | undefined> {
  if (call.operator !== undefined) return call.operator.accountId;
  if (named === undefined || !isAccountId(named)) return undefined;
  return (await auditsAccount(deps.context, named, 'console')) ? named : undefined;
}

/**
 * The page of a refusal, and its `console.denied` event naming the operator and the target: the refusal's own, else
 * the one the request named, so that a refused change says what it was aimed at (a throwing `onEvent` rejects here).
 *
 * @example return await refused(deps, call, { action: 'POST apps', account: '123456' }, new ConsoleRefusal('csrf'));
 */
export async function refused(deps: ConsoleDeps, call: ConsoleCall, aim: RefusedAim, refusal: ConsoleRefusal): Promise<SentinelResponse> {
  const audited = await auditedAccount(deps, call, aim.account);
  if (audited !== undefined) {
    scopedContext(deps, call.request).emit({
      type: 'console.denied',
      accountId: audited,
      operator: call.operator?.userId ?? aim.operator,
      action: refusedAction(aim.action),
      reason: refusal.reason,
      target: refusedTarget(refusal.target ?? aim.target),
    });
  }
  const accountId = call.operator?.accountId ?? '';
  const message = textHTML(call, refusal.messageKey, {
    account: accountId,
    target: refusal.target ?? '',
    detail: refusal.detail ?? '',
  });
  const back = call.operator === undefined ? `${call.base}/` : `${call.base}/${encodeURIComponent(accountId)}/apps`;
  return consolePage(deps.service.config, call, {
    title: text(call, 'errorTitle'),
    content: `<p class="error" role="alert">${message}</p><p><a href="${escapeHTML(back)}">${escapeHTML(text(call, 'back'))}</a></p>`,
    status: refusal.status,
    headers: { ...refusal.headers },
  });
}
