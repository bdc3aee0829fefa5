/**
 * The sessions page: an operator looks a user up and ends one of their device sessions or all of them, through the
 * service's own session operations (`listSessions`, `endSession`, `endUserSessions`), which end the grants issued
 * through the sessions and send back-channel logout to the apps.
 */
import type { SentinelResponse } from '../http/messages.js';
import { redirect } from '../http/messages.js';
import type { ParamMap } from '../http/params.js';
import { escapeHTML } from '../authorize/pages/escape-html.js';
import { type ConsoleDeps, scopedContext } from './deps.js';
import { accountPath, type ConsoleCall, consolePage, csrfField, pager, paragraph, shownTime, text, textHTML } from './page.js';
import { ConsoleRefusal } from './refusal.js';

const PAGE_SIZE = 20;
/**
 * The longest user id the page takes: the longest a sign-in takes (`users.authenticate`, `completeLogin()`). A
 * shorter bound left the users with longer ids (a directory's DN) out of reach: their sessions could not be listed
 * or ended here.
 */
const MAX_USER_ID = 256;

function userOf(value: string | null | undefined): string {
  const user = (value ?? '').trim();
  if (user.length > MAX_USER_ID) throw new ConsoleRefusal('invalid_input', { detail: 'the user id is too long' });
  return user;
}

/** `GET {account}/sessions?user=…`: the lookup form and, for a user, their sessions (paginated). */
export async function sessionsPage(deps: ConsoleDeps, call: ConsoleCall): Promise<SentinelResponse> {
  const operator = call.operator;
  if (operator === undefined) throw new Error('sessions page without an operator');
  const { service } = deps;
  const page = (content: string): SentinelResponse =>
    consolePage(service.config, call, { title: text(call, 'sessionsTitle'), section: 'sessions', content });
  const user = userOf(call.request.query.get('user'));
  const lookup = `${paragraph(text(call, 'sessionsLead'), 'lead')}
<form method="get" action="${escapeHTML(accountPath(call, 'sessions'))}" class="row" role="search">
<div><label for="user">${escapeHTML(text(call, 'userLabel'))}</label><input id="user" name="user" value="${escapeHTML(user)}" maxlength="${MAX_USER_ID}" required></div>
<div class="actions"><button type="submit" class="secondary">${escapeHTML(text(call, 'findSessions'))}</button></div></form>`;
  const notice = call.request.query.get('done') === '1' ? `<p class="notice" role="status">${escapeHTML(text(call, 'done'))}</p>` : '';
  if (user === '') return page(`${notice}${lookup}`);
  const sessions = await service.listSessions({ accountId: operator.accountId, userId: user });
  if (sessions.length === 0) return page(`${notice}${lookup}${paragraph(text(call, 'sessionsEmpty'))}`);
  const pages = Math.max(1, Math.ceil(sessions.length / PAGE_SIZE));
  const current = Math.min(pages, Math.max(1, Number.parseInt(call.request.query.get('page') ?? '1', 10) || 1));
  const admin = operator.role === 'admin';
  const hidden = `${csrfField(call)}<input type="hidden" name="user" value="${escapeHTML(user)}">`;
  const rows = sessions
    .slice((current - 1) * PAGE_SIZE, current * PAGE_SIZE)
    .map((session, index) => {
      const end = admin
        ? `<td><form method="post" action="${escapeHTML(accountPath(call, 'sessions/end'))}" class="inline">${hidden}<input type="hidden" name="sid" value="${escapeHTML(session.sid)}"><button type="submit" class="secondary" aria-label="${escapeHTML(`${text(call, 'endSession')} ${(current - 1) * PAGE_SIZE + index + 1}`)}">${escapeHTML(text(call, 'endSession'))}</button></form></td>`
        : '';
      return `<tr><td class="time">${escapeHTML(shownTime(session.authTime * 1000))}</td><td>${session.clientIds.map((id) => `<code>${escapeHTML(id)}</code>`).join('<br>') || '–'}</td>${end}</tr>`;
    })
    .join('\n');
  const endAll = admin
    ? `<form method="post" action="${escapeHTML(accountPath(call, 'sessions/end-all'))}">${hidden}<div class="actions"><button type="submit" class="danger">${escapeHTML(text(call, 'endAllSessions'))}</button></div></form>`
    : '';
  return page(`${notice}${lookup}<div class="table"><table><caption>${textHTML(call, 'sessionsCaption', { user })}</caption>
<thead><tr><th scope="col">${escapeHTML(text(call, 'columnStarted'))}</th><th scope="col">${escapeHTML(text(call, 'columnApps'))}</th>${admin ? `<th scope="col"><span class="sr">${escapeHTML(text(call, 'endSession'))}</span></th>` : ''}</tr></thead>
<tbody>${rows}</tbody></table></div>${pager(call, accountPath(call, 'sessions'), new URLSearchParams({ user }), current, pages)}${endAll}`);
}

/** `POST {account}/sessions/end` (one, by `sid`) and `POST {account}/sessions/end-all` (CSRF and role checked). */
export async function sessionsAction(
  deps: ConsoleDeps,
  call: ConsoleCall,
  parts: readonly string[],
  form: ParamMap,
): Promise<SentinelResponse> {
  const operator = call.operator;
  if (operator === undefined) throw new Error('sessions action without an operator');
  const { service } = deps;
  const user = userOf(form.get('user')?.[0]);
  const context = scopedContext(deps, call.request);
  // The events below report sessions already ended: committed, so a throwing onEvent goes to onError and the
  // operator is not told that nothing changed.
  const back = redirect(303, `${accountPath(call, 'sessions')}?${new URLSearchParams({ user, done: '1' }).toString()}`);
  if (parts.length === 1 && parts[0] === 'end') {
    const sid = form.get('sid')?.[0] ?? '';
    // Only a session of the user shown, in the operator's own account: a sid from elsewhere is refused.
    const owned = user !== '' && (await service.listSessions({ accountId: operator.accountId, userId: user })).some((s) => s.sid === sid);
    if (!owned || !(await service.endSession({ accountId: operator.accountId, sid }))) {
      throw new ConsoleRefusal('invalid_input', { detail: 'no such session of this user' });
    }
    context.emit(
      {
        type: 'console.changed',
        accountId: operator.accountId,
        operator: operator.userId,
        action: 'session.end',
        target: user,
      },
      'committed',
    );
    return back;
  }
  if (parts.length === 1 && parts[0] === 'end-all') {
    if (user === '') throw new ConsoleRefusal('invalid_input', { detail: 'a user id is needed' });
    const ended = await service.endUserSessions({ accountId: operator.accountId, userId: user });
    context.emit(
      {
        type: 'console.changed',
        accountId: operator.accountId,
        operator: operator.userId,
        action: `session.end_all:${ended}`,
        target: user,
      },
      'committed',
    );
    return back;
  }
  throw new ConsoleRefusal('invalid_input', { detail: 'unknown action' });
}
