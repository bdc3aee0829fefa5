/**
 * The account page's own links keep the language an app linked it with (`?ui_locales=de`): the page is reached again
 * through the login page, each action's redirect, every form and the pager, and each of those would otherwise fall
 * back to `Accept-Language`.
 */
import type { SentinelRequest } from '../http/messages.js';
import { requestUiLocales } from '../i18n/page-locale.js';

/**
 * `path` with the request's checked `ui_locales` (when it has one), then `params`, as its query.
 *
 * @example
 * keepUiLocales('/sentinel/api/account/123456/account', request, { done: 'others-ended' })
 * // '/sentinel/api/account/123456/account?ui_locales=de&done=others-ended' for a request with ?ui_locales=de
 */
export function keepUiLocales(path: string, request: SentinelRequest, params: Readonly<Record<string, string>> = {}): string {
  const query = new URLSearchParams();
  const uiLocales = requestUiLocales(request);
  if (uiLocales.length > 0) query.set('ui_locales', uiLocales.join(' '));
  for (const [name, value] of Object.entries(params)) query.set(name, value);
  const search = query.toString();
  return search === '' ? path : `${path}?${search}`;
}
