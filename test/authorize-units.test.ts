/**
 * Small pure pieces of the browser flow: response URLs, escaping, client IP, cross-site detection, throttle keys,
 * Accept negotiation, CSP.
 */
import { describe, expect, it } from 'vitest';
import { authorizationResponseURL, codeResponseURL, type RedirectTarget } from '../src/authorize/request/authorization-response.js';
import { wantsJSON } from '../src/authorize/pages/error-response.js';
import { escapeHTML } from '../src/authorize/pages/escape-html.js';
import { isCrossSiteRequest } from '../src/authorize/endpoints/cross-site.js';
import { contentSecurityPolicy, originSource } from '../src/authorize/pages/security-headers.js';
import { reserveAttempt, throttleKeys } from '../src/authorize/state/throttle.js';
import { clientIP } from '../src/http/client-ip.js';
import type { SentinelRequest } from '../src/index.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { authorizeQuery, call, LOGIN_PATH, startInteraction } from './helpers/direct-flow.js';
import { pkcePair } from './helpers/pkce.js';
import { digest, randomSecret } from '../src/lib/random-secrets.js';
import { generatePrivateJWK, MemoryStore } from '../src/index.js';
import { contextOf } from '../src/http/context.js';

const target = { accountId: '1', clientId: 'c', iss: 'https://id.example.com/sentinel/api/account/1' };
const req = (headers: Record<string, string> = {}, ip?: string): SentinelRequest => ({
  method: 'POST',
  path: '/',
  query: new URLSearchParams(),
  headers,
  ip,
});

describe('authorizationResponseURL', () => {
  it('appends with ? or & without re-encoding the registered query', () => {
    expect(authorizationResponseURL({ ...target, redirectUri: 'https://a.example/cb' }, { code: 'c1' })).toBe(
      `https://a.example/cb?code=c1&iss=${encodeURIComponent(target.iss)}`,
    );
    expect(authorizationResponseURL({ ...target, redirectUri: 'https://a.example/cb?x=a%20b+c' }, { code: 'c1' })).toMatch(
      /^https:\/\/a\.example\/cb\?x=a%20b\+c&code=c1&iss=/,
    );
    expect(authorizationResponseURL({ ...target, redirectUri: 'https://a.example/cb?' }, { code: 'c1' })).toMatch(
      /^https:\/\/a\.example\/cb\?code=c1&/,
    );
  });

  it('puts state and iss last and round-trips any state', () => {
    const state = '&=#+ %ü😀\r\n';
    const url = authorizationResponseURL(
      { ...target, redirectUri: 'com.example.app:/cb', state },
      { error: 'access_denied', error_description: 'no' },
    );
    const query = new URLSearchParams(url.split('?')[1]);
    expect([...query.keys()]).toEqual(['error', 'error_description', 'state', 'iss']);
    expect(query.get('state')).toBe(state);
    expect(url).not.toMatch(/[\r\n ]/);
  });
});

describe('codeResponseURL', () => {
  it('is the code appended as authorizationResponseURL appends it, whatever the URI, state and issuer', () => {
    const codes = [randomSecret(), randomSecret(), 'A-_z09'];
    const uris = ['https://a.example/cb', 'https://a.example/cb?x=a%20b+c', 'https://a.example/cb?', 'https://a.example/cb?x=1&'];
    const states = [undefined, '', 'plain', '&=#+ %ü😀\r\n'];
    // Issuers in turn, so the remembered encoding of the last one is replaced and found again.
    const issuers = [target.iss, 'https://id.example.com/s/api/account/a%2Fb?&é', target.iss, undefined, target.iss];
    for (const code of codes) {
      for (const redirectUri of uris) {
        for (const state of states) {
          for (const iss of issuers) {
            const to = { ...target, redirectUri, state, iss } as RedirectTarget;
            expect(codeResponseURL(to, code)).toBe(authorizationResponseURL(to, { code }));
          }
        }
      }
    }
  });
});

describe('escapeHTML', () => {
  it('escapes the characters that open tags or close attributes', () => {
    expect(escapeHTML(`<a href="x" onclick='y'>&\``)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&#96;');
  });
});

describe('clientIP', () => {
  it('ignores X-Forwarded-For unless trustProxy', () => {
    const request = req({ 'x-forwarded-for': '203.0.113.9, 10.0.0.1' }, '10.0.0.1');
    expect(clientIP({ trustProxy: false }, request)).toBe('10.0.0.1');
    expect(clientIP({ trustProxy: true }, request)).toBe('203.0.113.9');
    expect(clientIP({ trustProxy: true }, req({}, '10.0.0.2'))).toBe('10.0.0.2');
    expect(clientIP({ trustProxy: false }, req())).toBeNull();
  });
});

describe('isCrossSiteRequest', () => {
  const context = contextOf(makeSentinel({ issuer: 'https://id.example.com' }));
  it.each([
    [{}, false],
    [{ 'sec-fetch-site': 'same-origin', origin: 'null' }, false],
    [{ 'sec-fetch-site': 'none' }, false],
    [{ 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, true],
    [{ 'sec-fetch-site': 'same-site', origin: 'https://sub.id.example.com' }, true],
    [{ origin: 'https://evil.example' }, true],
    [{ origin: 'https://id.example.com' }, false],
    [{ 'sec-fetch-site': 'cross-site', origin: 'https://app.example.com' }, false],
  ] as const)('%j → %s', (headers, expected) => {
    expect(isCrossSiteRequest(context, req(headers), ['https://app.example.com'])).toBe(expected);
  });
});

describe('throttleKeys', () => {
  const context = contextOf(makeSentinel());

  it('folds username case and hides it behind a digest; accounts are separate', async () => {
    const a = await throttleKeys(context, '1', 'Alice', '203.0.113.1');
    expect(a.username).toBe((await throttleKeys(context, '1', ' alice ', null)).username);
    for (const spelling of ['alicé', 'ALİCE', 'alıce', 'al\u200Bice', 'ａｌｉｃｅ']) {
      expect((await throttleKeys(context, '1', spelling, null)).username, spelling).toBe(a.username);
    }
    expect((await throttleKeys(context, '1', 'alicia', null)).username).not.toBe(a.username);
    expect(a.username).not.toContain('alice');
    expect(a.username).not.toBe((await throttleKeys(context, '2', 'alice', null)).username);
    expect(a.ip).toBe('throttle:ip:203.0.113.1');
    // IPv6 by its /64: a subscriber's many addresses count as one.
    const ipOf = async (username: string, ip: string) => (await throttleKeys(context, '1', username, ip)).ip;
    expect(await ipOf('alice', '2001:db8:1:2::7')).toBe(await ipOf('bob', '2001:db8:1:2:ffff::1'));
    expect(await ipOf('alice', '2001:db8:1:2::7')).not.toBe(await ipOf('alice', '2001:db8:1:3::7'));
  });

  it('digests under a key of the deployment: a wordlist does not undo it, and every instance agrees', async () => {
    const typed = 'correct horse battery staple';
    const keys = await throttleKeys(context, '1', typed, null);
    // Not the plain digest a wordlist would find.
    expect(keys.usernameDigest).not.toBe(digest(`1\u0000${typed}`).slice(0, 22));
    // Another instance on the same store uses the same stored key, whatever its `keys`; another store another one.
    const sameStore = contextOf(makeSentinel({ keys: [generatePrivateJWK('ES256')], store: context.store }));
    expect(await throttleKeys(sameStore, '1', typed, null)).toEqual(keys);
    expect((await throttleKeys(contextOf(makeSentinel()), '1', typed, null)).username).not.toBe(keys.username);
    // throttle.digestKey: derived from it, the same for every instance configured with it.
    const explicit = () => contextOf(makeSentinel({ throttle: { digestKey: 'd'.repeat(32) } }));
    const derived = await throttleKeys(explicit(), '1', typed, null);
    expect(derived.username).not.toBe(keys.username);
    expect(await throttleKeys(explicit(), '1', typed, null)).toEqual(derived);
  });

  it('instances starting together on one store make one stored key (set-if-absent) and all use it', async () => {
    const store = new MemoryStore();
    const contexts = Array.from({ length: 5 }, () => contextOf(makeSentinel({ keys: [generatePrivateJWK('ES256')], store })));
    const digests = await Promise.all(contexts.map(async (each) => (await throttleKeys(each, '1', 'alice', null)).username));
    expect(new Set(digests).size).toBe(1);
    // A stored value that is not a key of 32 bytes is refused, never replaced nor counted under another key.
    const corrupt = new MemoryStore();
    await corrupt.set('throttle:digest-key', 'not-a-key', 60_000);
    await expect(throttleKeys(contextOf(makeSentinel({ store: corrupt })), '1', 'alice', null)).rejects.toThrow(/not a digest key/);
  });

  it('instances converge on one key when the store loses it: the one found missing is put back, else the new one', async () => {
    const store = new MemoryStore();
    const instance = () => contextOf(makeSentinel({ keys: [generatePrivateJWK('ES256')], store }));
    const counter = async (context: ReturnType<typeof instance>) => (await throttleKeys(context, '1', 'alice', null)).username;
    const [held, late] = [instance(), instance()];
    const before = await counter(held);
    // Lost (Redis restarted empty, or evicted it): the instance holding it puts it back, and one that never read it
    // adopts it, so the counter goes on under the same key.
    await store.delete('throttle:digest-key');
    expect(await counter(held)).toBe(before);
    expect(await counter(late)).toBe(before);
    // Lost again, and a new instance makes a new key first: those holding the old one adopt the new one.
    await store.delete('throttle:digest-key');
    const fresh = await counter(instance());
    expect(fresh).not.toBe(before);
    expect([await counter(held), await counter(late)]).toEqual([fresh, fresh]);
  });

  it('a counter that does not read as one refuses the attempt, and the memory store will not count on it', async () => {
    const context = contextOf(makeSentinel());
    const keys = await throttleKeys(context, '1', 'alice', null);
    await context.store.set(keys.username, 'not-a-count', 60_000);
    expect(await reserveAttempt(context, keys)).toEqual({ granted: false, scope: 'username' });
    await expect(context.store.increment(keys.username, 60_000)).rejects.toThrow(/not a counter/);
    await expect(context.store.decrement?.(keys.username)).rejects.toThrow(/not a counter/);
  });
});

describe('wantsJSON', () => {
  it.each([
    ['application/json', true],
    ['application/json, text/html', true],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', false],
    ['text/html, application/json', false],
    ['', false],
  ])('%s → %s', (accept, expected) => {
    expect(wantsJSON(req(accept === '' ? {} : { accept }))).toBe(expected);
  });
});

describe('content security policy', () => {
  it('allows only the nonce style, the given form targets and images', () => {
    const csp = contentSecurityPolicy({
      styleNonce: 'n0nce',
      formAction: ['https://app.example.com'],
      imgSrc: ['https://cdn.example.com'],
    });
    expect(csp).toBe(
      "default-src 'none'; style-src 'nonce-n0nce'; img-src https://cdn.example.com; form-action 'self' https://app.example.com; frame-ancestors 'none'; base-uri 'none'",
    );
  });

  it('originSource keeps origins and private-use schemes', () => {
    expect(originSource('https://app.example.com:8443/cb?x')).toBe('https://app.example.com:8443');
    expect(originSource('com.example.app:/cb')).toBe('com.example.app:');
    expect(originSource('/relative')).toBeNull();
  });

  it('the login page of an http://[::1] redirect allows form-action http: (no IPv6 host source), others exact', async () => {
    const loopback = { IPv6: 'http://[::1]:8123/cb', IPv4: 'http://127.0.0.1:8123/cb', https: 'https://app.example.com/cb' };
    const sentinel = makeSentinel({
      apps: [{ accountId: ACCOUNT, clientId: 'native', tokenEndpointAuthMethod: 'none', redirectUris: Object.values(loopback) }],
    });
    const formAction = async (redirectUri: string) => {
      const pkce = { code_challenge: pkcePair().challenge, code_challenge_method: 'S256' };
      const { interaction } = await startInteraction(sentinel, authorizeQuery({ client_id: 'native', redirect_uri: redirectUri, ...pkce }));
      const page = await call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }) });
      return /form-action ([^;]*)/.exec(String(page.headers['content-security-policy']))?.[1];
    };
    expect(await formAction(loopback.IPv6)).toBe("'self' http:");
    expect(await formAction(loopback.IPv4)).toBe("'self' http://127.0.0.1:8123");
    expect(await formAction(loopback.https)).toBe("'self' https://app.example.com");
  });
});
