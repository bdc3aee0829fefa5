/**
 * The login page's `form-action` names the app's redirect URI origin, which the app chose (dynamic registration lets
 * anyone choose one). RFC 3986 lets a host hold `*`, `;` and `,`, and the URL parser keeps them, so the origin went
 * into the Content-Security-Policy as written: `https://*` is CSP's wildcard (any https host), `;` starts a directive
 * of the app's choosing and `,` a second policy. A source is now named only for a host CSP's grammar can hold as
 * written (letters, digits and hyphens between dots, or an IP literal); any other is named by nothing.
 *
 * Such a host is now refused at registration too (hardening-registration-uris.test.ts), and an app that still holds
 * one (a host's own AppStore, an older registry row) is refused at the authorization endpoint before any page: the
 * CSP guard stays for whatever else hands it a URI.
 */
import { describe, expect, it } from 'vitest';
import { formActionSources, originSource } from '../src/authorize/pages/security-headers.js';
import { contextOf } from '../src/http/context.js';
import { MemoryAppStore } from '../src/index.js';
import { AUTHORIZE_PATH, authorizeQuery, call } from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel } from './helpers/fixtures.js';

const HOSTILE = ['https://*/cb', 'https://*.example.com/cb', 'https://a;sandbox/cb', 'https://a,b/cb', "https://a'b/cb", 'https://a!b/cb'];

async function loginPolicy(redirectUri: string): Promise<string> {
  const apps = (baseOptions().apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, redirectUris: [redirectUri] } : app));
  const sentinel = makeSentinel({ apps });
  const started = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ redirect_uri: redirectUri }) });
  const [path, query] = String(started.headers.location).split('?') as [string, string];
  const page = await call(sentinel, { path, query });
  expect(page.status).toBe(200);
  return String(page.headers['content-security-policy']);
}

/** An app registered before hosts were checked: its own AppStore hands it over as stored. */
async function storedWith(redirectUri: string) {
  const app = await contextOf(makeSentinel()).apps.findApp(ACCOUNT, CLIENT_ID);
  if (app === null) throw new Error('the fixture app is missing');
  return makeSentinel({ apps: [], appStore: new MemoryAppStore([{ ...app, redirectUris: [redirectUri] }]) });
}

describe('CSP sources from an app-chosen redirect host', () => {
  it.each(HOSTILE)('%s adds no source to form-action', (uri) => {
    expect(originSource(uri)).toBeNull();
    expect(formActionSources(uri)).toEqual([]);
  });

  it.each(HOSTILE)('%s, already stored, is refused before any page or redirect', async (uri) => {
    const sentinel = await storedWith(uri);
    const refused = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ redirect_uri: uri }) });
    expect(refused.status).toBe(400);
    expect(refused.headers.location).toBeUndefined();
    expect(String(refused.body)).toContain('not a valid redirect URI');
  });

  it('ordinary hosts, ports, IP literals and private-use schemes keep their sources', async () => {
    expect(/form-action ([^;]*)/.exec(await loginPolicy('https://app-1.example.com:8443/cb'))?.[1]).toBe(
      "'self' https://app-1.example.com:8443",
    );
    expect(originSource('http://127.0.0.1:8123/cb')).toBe('http://127.0.0.1:8123');
    expect(formActionSources('http://[::1]:8123/cb')).toEqual(['http:']);
    expect(originSource('com.example.app:/cb')).toBe('com.example.app:');
    expect(originSource('https://xn--bcher-kva.example/cb')).toBe('https://xn--bcher-kva.example');
  });
});
