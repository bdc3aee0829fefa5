/**
 * The checks of the options that zod cannot express, each about one area: a value that must parse as a URL, one
 * lifetime bounded by another, an option that needs another, apps that must be unique. Each throws a
 * {@link ConfigurationError} naming the field; `resolveConfig()` runs them in a fixed order, so the first wrong
 * field is always the one reported.
 */
import { isIP } from 'node:net';
import { assertFapi2App } from '../assurance/fapi2.js';
import { checkedApp } from '../apps/app-schema.js';
import type { App } from '../apps/app.js';
import { ConfigurationError } from '../errors.js';
import type { Parsed } from './schema.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The issuer without a trailing slash (RFC 8414 §2), and whether it is an http loopback one. */
export function checkIssuer(issuer: string): { issuer: string; insecureLoopback: boolean } {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new ConfigurationError('issuer', 'must be an absolute URL such as https://id.example.com');
  }
  if (url.search !== '' || url.hash !== '' || issuer.includes('#') || issuer.includes('?')) {
    throw new ConfigurationError('issuer', 'must not have a query or fragment (RFC 8414 §2)');
  }
  if (url.username !== '' || url.password !== '') throw new ConfigurationError('issuer', 'must not contain userinfo');
  const insecureLoopback = url.protocol === 'http:' && LOOPBACK.has(url.hostname);
  if (url.protocol !== 'https:' && !insecureLoopback) {
    throw new ConfigurationError('issuer', 'must use https (http is allowed only for localhost and 127.0.0.1)');
  }
  return { issuer: `${url.origin}${url.pathname.replace(/\/+$/, '')}`, insecureLoopback };
}

/**
 * `passkeys.origins` (the issuer's origin by default) must each be one a browser runs WebAuthn on for
 * `passkeys.rpId` (the issuer's host by default): https, or http on a loopback host, and a host that is the RP id or
 * under it (WebAuthn §5.1.4.1: the RP id is the origin's effective domain or a registrable suffix of it). Any other
 * pair makes every passkey ceremony fail in the browser, with nothing but a silent button to show for it. So does an
 * RP id that is an IP address: refused when given as `passkeys.rpId`.
 * @throws ConfigurationError naming `passkeys.origins` (or `passkeys.rpId` for the issuer's own origin).
 */
export function checkPasskeyOrigins(parsed: Parsed, issuer: string): void {
  const { rpId, origins } = parsed.passkeys;
  const accepted = origins ?? [new URL(issuer).origin];
  const field = origins === undefined ? 'passkeys.rpId' : 'passkeys.origins';
  const id = rpId ?? new URL(issuer).hostname;
  // WebAuthn §5.1.3 step 7 (§5.1.4.1 likewise): the caller's effective domain must be a domain; an IP address is
  // none, and the browser refuses the ceremony with a SecurityError. An RP id given as one is refused; the issuer's
  // own address (its default) is only warned of (warnIpRelyingParty): password sign-in works there.
  if (rpId !== undefined && isIpHost(rpId)) {
    throw new ConfigurationError(
      'passkeys.rpId',
      `${rpId} is an IP address, and browsers run passkeys only on a host name: use one (localhost in development)`,
    );
  }
  for (const origin of accepted) {
    const url = new URL(origin);
    if (url.protocol !== 'https:' && !LOOPBACK.has(url.hostname)) {
      throw new ConfigurationError(field, `${origin} must use https: browsers run passkeys only in a secure context`);
    }
    if (url.hostname !== id && !url.hostname.endsWith(`.${id}`)) {
      throw new ConfigurationError(field, `${origin} is not on the RP id ${id} or under it, so browsers refuse its passkeys`);
    }
  }
}

/**
 * Whether a URL's host name is an IP address (IPv6 in brackets, as `URL.hostname` gives it): no WebAuthn RP id.
 * @example isIpHost('127.0.0.1') // true
 */
export function isIpHost(hostname: string): boolean {
  return isIP(hostname) !== 0 || hostname.startsWith('[');
}

/** `login.url`, when given, must be a URL or a path the login redirect can be resolved against. */
export function checkLoginUrl(url: string | undefined): void {
  if (url !== undefined) {
    try {
      new URL(url, 'https://host.invalid');
    } catch {
      throw new ConfigurationError('login.url', 'must be a URL or an absolute path');
    }
  }
}

/** An idle lifetime must not exceed the absolute one it lives within: refresh tokens first, then sessions. */
export function checkIdleLifetimes(parsed: Parsed): void {
  if (parsed.refreshToken.idleTtl > parsed.refreshToken.absoluteTtl) {
    throw new ConfigurationError('refreshToken.idleTtl', 'must not exceed refreshToken.absoluteTtl');
  }
  if (parsed.session.idleTtl > parsed.session.absoluteTtl) {
    throw new ConfigurationError('session.idleTtl', 'must not exceed session.absoluteTtl');
  }
}

/**
 * Refuses a `session.cookieName` whose prefix (RFC 6265bis §4.1.3) makes browsers drop every cookie of the service:
 * `__Host-` asks for `Path=/`, and the service's cookies are scoped to its own path (`/sentinel`, so the host's
 * routes never receive them); `__Secure-` asks for `Secure`, which an `http://localhost` issuer's cookies lack. The
 * session, login-page, step and device cookies all carry the name, so the service would start and no sign-in would
 * ever stick: every `/authorize` back at the login page, every login form refused as out of date. Browsers match the
 * prefixes in any case.
 * @throws ConfigurationError naming `session.cookieName`.
 */
export function checkCookieName(parsed: Parsed, insecureLoopback: boolean): void {
  const name = parsed.session.cookieName;
  if (/^__host-/i.test(name)) {
    throw new ConfigurationError(
      'session.cookieName',
      `browsers keep a ${name.slice(0, 7)} cookie only with Path=/, and the service's cookies have its own path: choose a name without the prefix`,
    );
  }
  if (insecureLoopback && /^__secure-/i.test(name)) {
    throw new ConfigurationError(
      'session.cookieName',
      `browsers keep a ${name.slice(0, 9)} cookie only when it is Secure, which an http issuer's cookies are not: choose a name without the prefix`,
    );
  }
}

/**
 * Refuses `dpop.nonce` when nothing in the process can key the nonces (dpop/nonce.ts): they are an HMAC keyed from
 * `keyRotation.encryptionKey`, or else from the private part of the first key of `keys`, which an external signer
 * keeps outside the process. Without this check the service would start and answer every DPoP request with a 500.
 */
export function checkNonceKey(parsed: Parsed): void {
  const first = parsed.keys?.[0];
  if (!parsed.dpop.nonce || parsed.keyRotation !== undefined || first === undefined || !('signer' in first)) return;
  throw new ConfigurationError(
    'dpop.nonce',
    'needs keyRotation, or a private JWK first in keys: the nonces are keyed from a private key the process holds, and the first key is an external signer',
  );
}

/** The `apps` option, each checked in turn: a client id at most once per account, then the app's own problems. */
export function checkedApps(entries: Parsed['apps']): App[] {
  const seen = new Set<string>();
  return entries.map((entry, index) => {
    const field = `apps[${index}]`;
    const key = `${entry.accountId}\u0000${entry.clientId}`;
    if (seen.has(key)) {
      throw new ConfigurationError(`${field}.clientId`, `client id ${entry.clientId} is already registered in account ${entry.accountId}`);
    }
    seen.add(key);
    const app = checkedApp(entry, field);
    assertFapi2App(app, field);
    return app;
  });
}

/**
 * A string `audience` that is also a resource an app may ask tokens for (`defaultResources`, an app's `resources`)
 * would make the two kinds of token one: the account's tokens would pass the resource's guard, and the resource's
 * tokens every guard of the account (RFC 8707 §2 keeps a resource-bound token to its resource). A function
 * `audience`, and apps an AppStore or registration adds later, cannot be checked here.
 * @throws ConfigurationError naming `audience`.
 */
export function checkAudienceIsNoResource(parsed: Parsed, apps: readonly App[]): void {
  const { audience } = parsed;
  if (typeof audience !== 'string') return;
  const app = apps.find((candidate) => candidate.resources?.includes(audience));
  const where = parsed.defaultResources.includes(audience) ? 'defaultResources' : app && `the resources of app ${app.clientId}`;
  if (where === undefined) return;
  throw new ConfigurationError(
    'audience',
    `is also in ${where}: the account's tokens and that resource's would be accepted in each other's place`,
  );
}
