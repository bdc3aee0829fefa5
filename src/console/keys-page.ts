/**
 * The keys page: the signing keys with their state, algorithm and times (published, signing from, signing until),
 * rotation, and revocation behind a confirmation page. The shared key ring signs for every account, so only the
 * admins of `keysAccountId` may change it; everyone else sees it read-only. With `keysPerAccount` each account signs
 * with a ring of its own: the page shows the operator's account's ring, and its admins change it.
 */
import type { SentinelResponse } from '../http/messages.js';
import { redirect } from '../http/messages.js';
import type { ParamMap } from '../http/params.js';
import { describeRing, type RingKeyInfo } from '../keys/keyring/describe.js';
import { readRing } from '../keys/keyring/storage.js';
import { accountRingName } from '../keys/keyring/per-account.js';
import { escapeHTML } from '../authorize/pages/escape-html.js';
import { type ConsoleDeps, scopedContext } from './deps.js';
import type { ConsoleMessages } from './messages/console-messages.js';
import { accountPath, type ConsoleCall, consolePage, csrfField, paragraph, shownTime, text, textHTML } from './page.js';
import { ConsoleRefusal } from './refusal.js';

const STATE_TEXT: Readonly<Record<RingKeyInfo['state'], keyof ConsoleMessages>> = {
  pending: 'statePending',
  active: 'stateActive',
  retired: 'stateRetired',
  revoked: 'stateRevoked',
};

/** A ring key with the instant it stopped (or stops) signing, when known. */
interface ShownKey extends RingKeyInfo {
  signsUntil?: string | undefined;
}

/** The account whose own ring the page shows and changes (`keysPerAccount`), else `undefined`: the shared ring. */
function ringAccount(deps: ConsoleDeps, call: ConsoleCall): string | undefined {
  return deps.service.config.keysPerAccount ? call.operator?.accountId : undefined;
}

async function ringKeys(deps: ConsoleDeps, call: ConsoleCall): Promise<ShownKey[] | null> {
  const rotation = deps.service.config.keyRotation;
  if (rotation === undefined) return null;
  const account = ringAccount(deps, call);
  const document = await readRing(deps.context.store, account === undefined ? rotation.name : accountRingName(rotation.name, account));
  if (document === null) return [];
  const keys = describeRing(document, Date.now());
  // A key signs until the next key of its algorithm takes over (or until it was revoked).
  return keys.map((key) => {
    const successor = keys
      .filter((other) => other.alg === key.alg && other.state !== 'revoked' && other.activatesAt > key.activatesAt)
      .sort((a, b) => a.activatesAt.localeCompare(b.activatesAt))[0];
    const signsUntil = key.revokedAt ?? (key.state === 'pending' ? undefined : successor?.activatesAt);
    return { ...key, signsUntil };
  });
}

function mayChangeKeys(deps: ConsoleDeps, call: ConsoleCall): boolean {
  if (call.operator?.role !== 'admin') return false;
  // An account's own ring signs for that account alone: its admins change it.
  if (ringAccount(deps, call) !== undefined) return true;
  return deps.options.keysAccountId !== undefined && deps.options.keysAccountId === call.operator.accountId;
}

/** `GET {account}/keys`: the ring (or the configured keys). */
export async function keysPage(deps: ConsoleDeps, call: ConsoleCall): Promise<SentinelResponse> {
  const keys = await ringKeys(deps, call);
  const page = (content: string): SentinelResponse =>
    consolePage(deps.service.config, call, { title: text(call, 'keysTitle'), section: 'keys', content });
  const notice = call.request.query.get('done') === '1' ? `<p class="notice" role="status">${escapeHTML(text(call, 'done'))}</p>` : '';
  if (keys === null) {
    const rows = deps.context.keys.jwks.keys
      .map((jwk) => `<tr><td><code>${escapeHTML(String(jwk.kid ?? ''))}</code></td><td>${escapeHTML(String(jwk.alg ?? ''))}</td></tr>`)
      .join('');
    return page(`${paragraph(text(call, 'keysStatic'))}<div class="table"><table><caption>${escapeHTML(text(call, 'keysCaption'))}</caption>
<thead><tr><th scope="col">${escapeHTML(text(call, 'columnKid'))}</th><th scope="col">${escapeHTML(text(call, 'columnAlg'))}</th></tr></thead><tbody>${rows}</tbody></table></div>`);
  }
  const canChange = mayChangeKeys(deps, call);
  const rows = keys
    .map((key) => {
      const revoke =
        canChange && key.state !== 'revoked'
          ? `<a href="${escapeHTML(accountPath(call, `keys/${encodeURIComponent(key.kid)}/revoke`))}">${escapeHTML(text(call, 'revoke'))}<span class="sr"> ${escapeHTML(key.kid)}</span></a>`
          : '';
      return `<tr><td><code>${escapeHTML(key.kid)}</code></td><td>${escapeHTML(key.alg)}</td><td>${escapeHTML(text(call, STATE_TEXT[key.state]))}</td>
<td class="time">${escapeHTML(shownTime(key.createdAt))}</td><td class="time">${escapeHTML(shownTime(key.activatesAt))}</td><td class="time">${escapeHTML(key.signsUntil === undefined ? '–' : shownTime(key.signsUntil))}</td>${canChange ? `<td>${revoke}</td>` : ''}</tr>`;
    })
    .join('\n');
  const readOnly =
    ringAccount(deps, call) === undefined &&
    deps.options.keysAccountId !== undefined &&
    deps.options.keysAccountId !== call.operator?.accountId
      ? `<p>${textHTML(call, 'keysReadOnly', { account: deps.options.keysAccountId })}</p>`
      : '';
  const rotate = canChange
    ? `<form method="post" action="${escapeHTML(accountPath(call, 'keys/rotate'))}">${csrfField(call)}<div class="actions"><button type="submit" class="primary">${escapeHTML(text(call, 'rotateKeys'))}</button></div></form>`
    : '';
  return page(`${notice}${readOnly}<div class="table"><table><caption>${escapeHTML(text(call, 'keysCaption'))}</caption>
<thead><tr><th scope="col">${escapeHTML(text(call, 'columnKid'))}</th><th scope="col">${escapeHTML(text(call, 'columnAlg'))}</th><th scope="col">${escapeHTML(text(call, 'columnState'))}</th>
<th scope="col">${escapeHTML(text(call, 'columnPublished'))}</th><th scope="col">${escapeHTML(text(call, 'columnSigning'))}</th><th scope="col">${escapeHTML(text(call, 'columnRetiring'))}</th>${canChange ? `<th scope="col"><span class="sr">${escapeHTML(text(call, 'revoke'))}</span></th>` : ''}</tr></thead>
<tbody>${rows}</tbody></table></div>${rotate}`);
}

async function liveKey(deps: ConsoleDeps, call: ConsoleCall, kid: string): Promise<ShownKey> {
  const keys = await ringKeys(deps, call);
  if (keys === null) throw new ConsoleRefusal('no_key_ring');
  const key = keys.find((entry) => entry.kid === kid && entry.state !== 'revoked');
  if (key === undefined) throw new ConsoleRefusal('unknown_kid', { target: kid.slice(0, 200) });
  return key;
}

function requireKeysAdmin(deps: ConsoleDeps, call: ConsoleCall): void {
  if (deps.service.config.keyRotation === undefined) throw new ConsoleRefusal('no_key_ring');
  // A viewer is refused for being one (the page and the event say so), not for the ring being another account's.
  if (call.operator?.role !== 'admin') throw new ConsoleRefusal('viewer');
  if (!mayChangeKeys(deps, call)) throw new ConsoleRefusal('keys_account');
}

/** `GET {account}/keys/{kid}/revoke`: the confirmation, before anything happens. */
export async function revokeConfirmPage(deps: ConsoleDeps, call: ConsoleCall, kid: string): Promise<SentinelResponse> {
  requireKeysAdmin(deps, call);
  const key = await liveKey(deps, call, kid);
  return consolePage(deps.service.config, call, {
    title: text(call, 'revokeTitle', { kid: key.kid }),
    section: 'keys',
    content: `<p class="error">${escapeHTML(text(call, 'revokeLead'))}</p>
<form method="post" action="${escapeHTML(accountPath(call, `keys/${encodeURIComponent(key.kid)}/revoke`))}">${csrfField(call)}
<div class="actions"><button type="submit" class="danger">${escapeHTML(text(call, 'revokeConfirm'))}</button>
<a href="${escapeHTML(accountPath(call, 'keys'))}">${escapeHTML(text(call, 'cancel'))}</a></div></form>`,
  });
}

/** `POST {account}/keys/rotate` and `POST {account}/keys/{kid}/revoke` (CSRF and role already checked). */
export async function keysAction(
  deps: ConsoleDeps,
  call: ConsoleCall,
  parts: readonly string[],
  _form: ParamMap,
): Promise<SentinelResponse> {
  const operator = call.operator;
  if (operator === undefined) throw new Error('keys action without an operator');
  const context = scopedContext(deps, call.request);
  if (parts.length === 1 && parts[0] === 'rotate') {
    requireKeysAdmin(deps, call);
    await deps.service.rotateKeys({ accountId: ringAccount(deps, call) });
    // The ring changed already: committed, so a throwing onEvent goes to onError, not to a 500 saying nothing changed.
    context.emit({ type: 'console.changed', accountId: operator.accountId, operator: operator.userId, action: 'keys.rotate' }, 'committed');
    return redirect(303, `${accountPath(call, 'keys')}?done=1`);
  }
  if (parts.length === 2 && parts[1] === 'revoke') {
    const kid = parts[0] ?? '';
    requireKeysAdmin(deps, call);
    await liveKey(deps, call, kid);
    if (!(await deps.service.revokeKey(kid, { accountId: ringAccount(deps, call) })))
      throw new ConsoleRefusal('unknown_kid', { target: kid });
    context.emit(
      { type: 'console.changed', accountId: operator.accountId, operator: operator.userId, action: 'keys.revoke', target: kid },
      'committed',
    );
    return redirect(303, `${accountPath(call, 'keys')}?done=1`);
  }
  throw new ConsoleRefusal('unknown_kid', { target: (parts[0] ?? '').slice(0, 200) });
}
