/**
 * The apps pages: the account's apps (searched, paginated), one app, and the changes an admin makes: register
 * (the secret shown once), redirect URIs, secret rotation with overlap, disable, enable, delete. Every change goes
 * through the AppStore with the operator as the change's actor and emits the registry's own `app.*` event and
 * `console.changed`.
 */
import type { App } from '../apps/app.js';
import { assertValidApp } from '../apps/app-validation.js';
import { applyAppPatch } from '../apps/app-patch.js';
import { generateClientSecret, hashClientSecret } from '../apps/client-secrets.js';
import { registerApp } from '../apps/register-app.js';
import { isConfigurationError } from '../errors.js';
import { appPresence } from '../guard/app-presence.js';
import type { SentinelResponse } from '../http/messages.js';
import { redirect } from '../http/messages.js';
import type { ParamMap } from '../http/params.js';
import { escapeHTML, isolateHTML } from '../authorize/pages/escape-html.js';
import { type ConsoleDeps, scopedContext } from './deps.js';
import { accountPath, type ConsoleCall, consolePage, csrfField, pager, paragraph, shownTime, text, textHTML } from './page.js';
import { onceField, runOnce } from './form-once.js';
import { ConsoleRefusal } from './refusal.js';
import { CONSOLE_CLIENT_ID } from './sign-in.js';

/** Apps per page of the list. */
const PAGE_SIZE = 20;
/**
 * The most apps the list sorts and pages through: a registry larger than this is searched, not browsed. The search and
 * an app's own page look at every app, so none is out of the console's reach.
 */
const MAX_LISTED = 10_000;
const MAX_SEARCH = 200;
const MAX_OVERLAP = 30 * 86_400;
const DEFAULT_OVERLAP = 86_400;

function operatorOf(call: ConsoleCall): { accountId: string; userId: string } {
  const operator = call.operator;
  if (operator === undefined) throw new Error('account page without an operator');
  return operator;
}

async function listApps(deps: ConsoleDeps, accountId: string): Promise<readonly App[]> {
  const list = deps.context.apps.listApps;
  if (list === undefined) return [];
  return list.call(deps.context.apps, accountId);
}

function statusText(call: ConsoleCall, app: App): string {
  return text(call, app.disabled === true ? 'statusDisabled' : 'statusEnabled');
}

/** `GET {account}/apps?q&page`: the list and the registration form. */
export async function appsPage(deps: ConsoleDeps, call: ConsoleCall): Promise<SentinelResponse> {
  const { accountId } = operatorOf(call);
  const query = (call.request.query.get('q') ?? '').trim().slice(0, MAX_SEARCH);
  const needle = query.toLowerCase();
  // Cut after the search, so that a search finds an app wherever the registry lists it.
  const all = (await listApps(deps, accountId))
    .filter((app) => needle === '' || app.clientId.toLowerCase().includes(needle) || (app.name ?? '').toLowerCase().includes(needle))
    .slice(0, MAX_LISTED)
    .sort((a, b) => (a.name ?? a.clientId).localeCompare(b.name ?? b.clientId) || a.clientId.localeCompare(b.clientId));
  const pages = Math.max(1, Math.ceil(all.length / PAGE_SIZE));
  const page = Math.min(pages, Math.max(1, Number.parseInt(call.request.query.get('page') ?? '1', 10) || 1));
  const shown = all.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
  const rows = shown
    .map(
      (
        app,
      ) => `<tr><td><a href="${escapeHTML(accountPath(call, `apps/${encodeURIComponent(app.clientId)}`))}">${isolateHTML(app.name ?? app.clientId)}</a></td>
<td><code>${escapeHTML(app.clientId)}</code></td><td>${escapeHTML(app.tokenEndpointAuthMethod)}</td><td>${escapeHTML(statusText(call, app))}</td></tr>`,
    )
    .join('\n');
  const table =
    shown.length === 0
      ? paragraph(text(call, 'appsEmpty'))
      : `<div class="table"><table><caption>${escapeHTML(text(call, 'appsCaption'))}</caption>
<thead><tr><th scope="col">${escapeHTML(text(call, 'columnName'))}</th><th scope="col">${escapeHTML(text(call, 'columnClientId'))}</th><th scope="col">${escapeHTML(text(call, 'columnAuth'))}</th><th scope="col">${escapeHTML(text(call, 'columnStatus'))}</th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
  const search = `<form method="get" action="${escapeHTML(accountPath(call, 'apps'))}" class="row" role="search">
<div><label for="q">${escapeHTML(text(call, 'searchLabel'))}</label><input id="q" name="q" value="${escapeHTML(query)}" maxlength="${MAX_SEARCH}"></div>
<div class="actions"><button type="submit" class="secondary">${escapeHTML(text(call, 'search'))}</button></div></form>`;
  const listQuery = new URLSearchParams(query === '' ? {} : { q: query });
  const register =
    call.operator?.role === 'admin'
      ? `<section><h2>${escapeHTML(text(call, 'registerTitle'))}</h2>
<form method="post" action="${escapeHTML(accountPath(call, 'apps'))}">${csrfField(call)}${onceField()}
<label for="name">${escapeHTML(text(call, 'nameLabel'))}</label><input id="name" name="name" maxlength="200">
<label for="redirect_uris">${escapeHTML(text(call, 'redirectUrisLabel'))}</label>
<textarea id="redirect_uris" name="redirect_uris" rows="3" aria-describedby="redirect_uris_hint"></textarea>
<p class="hint" id="redirect_uris_hint">${escapeHTML(text(call, 'redirectUrisHint'))}</p>
<label for="auth">${escapeHTML(text(call, 'authMethodLabel'))}</label>
<select id="auth" name="auth"><option value="client_secret_basic">${escapeHTML(text(call, 'authConfidential'))}</option><option value="none">${escapeHTML(text(call, 'authPublic'))}</option></select>
<div class="actions"><button type="submit" class="primary">${escapeHTML(text(call, 'register'))}</button></div></form></section>`
      : '';
  const notice = call.request.query.get('done') === '1' ? `<p class="notice" role="status">${escapeHTML(text(call, 'done'))}</p>` : '';
  return consolePage(deps.service.config, call, {
    title: text(call, 'appsTitle'),
    section: 'apps',
    content: `${notice}${search}${table}${pager(call, accountPath(call, 'apps'), listQuery, page, pages)}${register}`,
  });
}

async function findListed(deps: ConsoleDeps, accountId: string, clientId: string): Promise<App> {
  // Listed rather than found: a disabled app is unknown to findApp but still the registry's, to enable or delete.
  const found = clientId === '' ? undefined : (await listApps(deps, accountId)).find((app) => app.clientId === clientId);
  if (found === undefined) throw new ConsoleRefusal('unknown_app', { target: clientId.slice(0, 200) });
  return found;
}

function uris(app: App): string {
  return app.redirectUris.join('\n');
}

/** `GET {account}/apps/{clientId}`: one app and its forms. */
export async function appPage(deps: ConsoleDeps, call: ConsoleCall, clientId: string): Promise<SentinelResponse> {
  const { accountId } = operatorOf(call);
  const notice = call.request.query.get('done') === '1' ? `<p class="notice" role="status">${escapeHTML(text(call, 'done'))}</p>` : '';
  const app = await findListed(deps, accountId, clientId);
  const path = (action: string): string => accountPath(call, `apps/${encodeURIComponent(app.clientId)}/${action}`);
  const details = `<dl>
<dt>${escapeHTML(text(call, 'columnClientId'))}</dt><dd><code>${escapeHTML(app.clientId)}</code></dd>
<dt>${escapeHTML(text(call, 'columnStatus'))}</dt><dd>${escapeHTML(statusText(call, app))}</dd>
<dt>${escapeHTML(text(call, 'columnAuth'))}</dt><dd>${escapeHTML(app.tokenEndpointAuthMethod)}</dd>
<dt>${escapeHTML(text(call, 'grantTypesLabel'))}</dt><dd>${escapeHTML(app.grantTypes.join(', '))}</dd>
<dt>${escapeHTML(text(call, 'redirectUrisLabel'))}</dt><dd>${app.redirectUris.map((uri) => `<code>${escapeHTML(uri)}</code>`).join('<br>') || '–'}</dd>
${app.createdAt === undefined ? '' : `<dt>${escapeHTML(text(call, 'createdLabel'))}</dt><dd>${escapeHTML(shownTime(app.createdAt * 1000))}</dd>`}
${(app.retiringSecrets ?? []).map((secret) => `<dt>${escapeHTML(text(call, 'retiringLabel'))}</dt><dd>${escapeHTML(shownTime(secret.expiresAt * 1000))}</dd>`).join('\n')}
</dl>`;
  const admin = call.operator?.role === 'admin';
  let forms = '';
  if (app.clientId === CONSOLE_CLIENT_ID) forms = paragraph(text(call, 'consoleClient'), 'notice');
  else if (admin) {
    // A public or private_key_jwt app has no secret: its rotation is always refused, so the page does not offer it.
    const hasSecret = app.tokenEndpointAuthMethod !== 'none' && app.tokenEndpointAuthMethod !== 'private_key_jwt';
    const rotateForm = `<section><h2>${escapeHTML(text(call, 'rotateTitle'))}</h2>
<form method="post" action="${escapeHTML(path('rotate-secret'))}">${csrfField(call)}${onceField()}
<label for="overlap">${escapeHTML(text(call, 'overlapLabel'))}</label>
<input id="overlap" name="overlap" type="number" min="0" max="${MAX_OVERLAP}" value="${DEFAULT_OVERLAP}">
<div class="actions"><button type="submit" class="secondary">${escapeHTML(text(call, 'rotateSecret'))}</button></div></form></section>
`;
    const button = (action: string, label: string, className: string): string =>
      `<form method="post" action="${escapeHTML(path(action))}" class="inline">${csrfField(call)}<button type="submit" class="${className}">${escapeHTML(label)}</button></form>`;
    forms = `<section><h2>${escapeHTML(text(call, 'redirectUrisLabel'))}</h2>
<form method="post" action="${escapeHTML(path('redirect-uris'))}">${csrfField(call)}
<label for="redirect_uris">${escapeHTML(text(call, 'redirectUrisLabel'))}</label>
<textarea id="redirect_uris" name="redirect_uris" rows="3" aria-describedby="redirect_uris_hint">${escapeHTML(uris(app))}</textarea>
<p class="hint" id="redirect_uris_hint">${escapeHTML(text(call, 'redirectUrisHint'))}</p>
<div class="actions"><button type="submit" class="primary">${escapeHTML(text(call, 'saveRedirectUris'))}</button></div></form></section>
${hasSecret ? rotateForm : ''}<section><h2>${escapeHTML(text(call, 'columnStatus'))}</h2>
<div class="actions">${app.disabled === true ? button('enable', text(call, 'enable'), 'secondary') : button('disable', text(call, 'disable'), 'secondary')}</div></section>
<section><h2>${escapeHTML(text(call, 'deleteTitle'))}</h2>${paragraph(text(call, 'deleteLead'))}
<div class="actions">${button('delete', text(call, 'deleteApp'), 'danger')}</div></section>`;
  }
  return consolePage(deps.service.config, call, {
    title: text(call, 'appTitle', { name: app.name ?? app.clientId }),
    heading: textHTML(call, 'appTitle', { name: app.name ?? app.clientId }),
    section: 'apps',
    content: `${notice}${details}${forms}<p><a href="${escapeHTML(accountPath(call, 'apps'))}">${escapeHTML(text(call, 'back'))}</a></p>`,
  });
}

function field(form: ParamMap, name: string, max: number): string {
  const value = form.get(name)?.[0] ?? '';
  if (value.length > max) throw new ConsoleRefusal('invalid_input', { detail: `${name} is too long` });
  return value;
}

function redirectUrisOf(form: ParamMap): string[] {
  const list = field(form, 'redirect_uris', 20_000)
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (list.length > 50) throw new ConsoleRefusal('invalid_input', { detail: 'at most 50 redirect URIs' });
  return list;
}

/** A ConfigurationError of the registry's checks is the operator's mistake: its message names the field. */
async function validated<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isConfigurationError(error)) throw new ConsoleRefusal('invalid_input', { detail: error.message });
    throw error;
  }
}

function secretPage(
  deps: ConsoleDeps,
  call: ConsoleCall,
  title: string,
  app: App,
  secret: string | undefined,
  lead: string,
): SentinelResponse {
  const secretHTML =
    secret === undefined
      ? paragraph(text(call, 'noSecret'))
      : `${paragraph(text(call, 'secretOnce'), 'notice')}<h2>${escapeHTML(text(call, 'secretLabel'))}</h2><p class="secret">${escapeHTML(secret)}</p>`;
  return consolePage(deps.service.config, call, {
    title,
    section: 'apps',
    content: `${lead === '' ? '' : paragraph(lead, 'lead')}<dl><dt>${escapeHTML(text(call, 'columnClientId'))}</dt><dd><code>${escapeHTML(app.clientId)}</code></dd></dl>${secretHTML}
<p><a href="${escapeHTML(accountPath(call, `apps/${encodeURIComponent(app.clientId)}`))}">${escapeHTML(text(call, 'back'))}</a></p>`,
  });
}

/** `POST {account}/apps[/{clientId}/{action}]`: an admin's change (CSRF and role already checked). */
export async function appsAction(
  deps: ConsoleDeps,
  call: ConsoleCall,
  parts: readonly string[],
  form: ParamMap,
): Promise<SentinelResponse> {
  const { accountId, userId } = operatorOf(call);
  const context = scopedContext(deps, call.request);
  const apps = context.apps;
  const change = { actor: `console:${userId}` };
  // Every event below reports a change already saved, so each is committed: a failing onEvent goes to onError and
  // the operator still sees the outcome (a rotated or registered secret is shown only on that page).
  const changed = (action: string, target: string): void =>
    context.emit({ type: 'console.changed', accountId, operator: userId, action, target, clientId: target }, 'committed');
  if (parts.length === 0) {
    const name = field(form, 'name', 200).trim();
    const auth = field(form, 'auth', 40);
    if (auth !== 'client_secret_basic' && auth !== 'none') throw new ConsoleRefusal('invalid_input', { detail: 'unknown client type' });
    const redirectUris = redirectUrisOf(form);
    // Refused as every other change the registry cannot make: registerApp's ConfigurationError for it would read as
    // the operator's invalid input, naming an option of the host's.
    if (apps.saveApp === undefined) throw new ConsoleRefusal('unsupported');
    // Answered with the secret's page, not a redirect: a reload of it sends this form again (form-once.ts).
    return runOnce(deps.context.store, form, deps.sessionTtl, undefined, async () => {
      const result = await validated(() =>
        registerApp(
          apps,
          { accountId, redirectUris, tokenEndpointAuthMethod: auth, ...(name === '' ? {} : { name }) },
          context.emit,
          // The operator, as for every other change here: the registry's change log and app.registered name them.
          change.actor,
        ),
      );
      changed('app.register', result.clientId);
      return secretPage(deps, call, text(call, 'registeredTitle'), result.app, result.clientSecret, '');
    });
  }
  const [clientId = '', action = ''] = parts;
  if (parts.length !== 2) throw new ConsoleRefusal('unknown_app', { target: clientId });
  const app = await findListed(deps, accountId, clientId);
  if (clientId === CONSOLE_CLIENT_ID) throw new ConsoleRefusal('console_client', { target: clientId });
  const done = (): SentinelResponse => redirect(303, `${accountPath(call, `apps/${encodeURIComponent(clientId)}`)}?done=1`);
  switch (action) {
    case 'redirect-uris': {
      const redirectUris = redirectUrisOf(form);
      if (apps.patchApp === undefined) throw new ConsoleRefusal('unsupported');
      const patch = apps.patchApp;
      const written = await validated(async () =>
        patch.call(
          apps,
          accountId,
          clientId,
          (current) => {
            // Checked as a whole app: the URIs must suit its grant types and client type.
            assertValidApp(applyAppPatch(current, { redirectUris }), 'redirectUris');
            return { redirectUris };
          },
          change,
        ),
      );
      // Deleted since it was listed (another operator, the CLI): nothing was written, so nothing is announced.
      if (written === null) throw new ConsoleRefusal('unknown_app', { target: clientId });
      context.emit({ type: 'app.updated', accountId, clientId, actor: change.actor, changed: ['redirectUris'] }, 'committed');
      changed('app.redirect_uris', clientId);
      return done();
    }
    case 'rotate-secret': {
      if (app.tokenEndpointAuthMethod === 'private_key_jwt') throw new ConsoleRefusal('key_based_app', { target: clientId });
      if (app.tokenEndpointAuthMethod === 'none') throw new ConsoleRefusal('public_app', { target: clientId });
      const overlapText = field(form, 'overlap', 10);
      const overlap = overlapText === '' ? DEFAULT_OVERLAP : Number(overlapText);
      if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_OVERLAP) {
        throw new ConsoleRefusal('invalid_input', { detail: `the overlap must be 0 to ${MAX_OVERLAP} seconds` });
      }
      const rotate = apps.rotateClientSecret;
      if (rotate === undefined) throw new ConsoleRefusal('unsupported');
      // Answered with the new secret's page: a reload must not rotate again and drop the secret just shown.
      return runOnce(deps.context.store, form, deps.sessionTtl, clientId, async () => {
        const secret = generateClientSecret();
        const rotated = await rotate.call(apps, accountId, clientId, hashClientSecret(secret), overlap, change);
        if (rotated === null) throw new ConsoleRefusal('unknown_app', { target: clientId });
        context.emit({ type: 'app.secret_rotated', accountId, clientId, actor: change.actor, overlapSeconds: overlap }, 'committed');
        changed('app.rotate_secret', clientId);
        return secretPage(deps, call, text(call, 'rotatedTitle'), rotated, secret, text(call, 'rotatedLead', { seconds: String(overlap) }));
      });
    }
    case 'disable':
    case 'enable': {
      const run = action === 'disable' ? apps.disableApp : apps.enableApp;
      if (run === undefined) throw new ConsoleRefusal('unsupported');
      if (!(await run.call(apps, accountId, clientId, change))) throw new ConsoleRefusal('unknown_app', { target: clientId });
      // This instance's bearer guard forgets the app at once: its tokens stop here now, elsewhere within the
      // presence cache's lifetime.
      appPresence(context).forget(accountId, clientId);
      // The registry's own event, as for the console's other app changes: an audit sink that follows the registry
      // (app.*) sees the app stop and start again. `changed` names the field, whichever way it went.
      context.emit({ type: 'app.updated', accountId, clientId, actor: change.actor, changed: ['disabled'] }, 'committed');
      changed(`app.${action}`, clientId);
      return done();
    }
    case 'delete': {
      if (apps.deleteApp === undefined) throw new ConsoleRefusal('unsupported');
      if (!(await apps.deleteApp(accountId, clientId, change))) throw new ConsoleRefusal('unknown_app', { target: clientId });
      appPresence(context).forget(accountId, clientId);
      context.emit({ type: 'app.deleted', accountId, clientId, actor: change.actor }, 'committed');
      changed('app.delete', clientId);
      return redirect(303, `${accountPath(call, 'apps')}?done=1`);
    }
    default:
      throw new ConsoleRefusal('unknown_app', { target: clientId });
  }
}
