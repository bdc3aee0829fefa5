/**
 * Whether a URI an app has registered may be sent to the browser. Every registration path checks its URIs
 * (`redirectURIProblem`), but an app can come from elsewhere: a host's own AppStore reads its own database, and a
 * PostgreSQL registry may hold rows written before the check became strict (a `https:///cb` that browsers repair
 * into another host). So the URI about to become a `Location` is checked again here, against the same rule.
 *
 * The check parses the URI (about 2.4 µs on the development machine), so its answer is kept per registered list
 * and URI: a registry that hands out the same App object (MemoryAppStore, the PostgreSQL lookup cache) pays it once
 * per app and URI, then about 15 ns per request; a store that builds a fresh App per lookup pays it every time.
 */
import { isFapi2 } from '../../assurance/fapi2.js';
import type { App } from '../../apps/app.js';
import { redirectURIProblem } from '../../apps/app-validation.js';
import { sameLoopbackRedirect } from './loopback-redirect.js';

// Per registered list, the answer for each URI asked about so far (only those: a list can be long).
const ANSWERS = new WeakMap<readonly string[], Map<string, boolean>>();

/**
 * Whether `uri`, one of the registered `uris`, passes the registration check and may be redirected to.
 *
 * @example
 * if (!isUsableRegisteredURI(app.redirectUris, requested)) throw new OAuthError('invalid_request', '…');
 */
export function isUsableRegisteredURI(uris: readonly string[], uri: string): boolean {
  let answers = ANSWERS.get(uris);
  if (answers === undefined) {
    answers = new Map();
    ANSWERS.set(uris, answers);
  }
  let usable = answers.get(uri);
  if (usable === undefined) {
    usable = redirectURIProblem(uri) === null;
    answers.set(uri, usable);
  }
  return usable;
}

/**
 * The registered entry of `app` that the redirect URI `requested` matches, or `undefined`. Exact string comparison
 * (RFC 9700 §4.1.3): no normalisation of case, slashes, ports or queries. Except the port of a loopback IP redirect
 * URI (RFC 8252 §7.3), not for FAPI 2.0 apps: the exception is for native apps, and the profile admits only
 * confidential clients that name their redirect URI in an authenticated pushed request, so it keeps plain string
 * matching.
 *
 * @example
 * const registered = registeredEntryOf(app, 'http://127.0.0.1:51004/cb'); // 'http://127.0.0.1/cb'
 */
export function registeredEntryOf(app: App, requested: string): string | undefined {
  if (app.redirectUris.includes(requested)) return requested;
  return isFapi2(app) ? undefined : app.redirectUris.find((uri) => sameLoopbackRedirect(uri, requested));
}
