/**
 * The login page's `form-action` names the app's redirect URI origin, which the app chose (dynamic registration lets
 * anyone choose one). RFC 3986 lets a host hold `*`, `;` and `,`, and the URL parser keeps them, so the origin went
 * into the Content-Security-Policy as written: `https://*` is CSP's wildcard (any https host), `;` starts a directive
 * of the app's choosing and `,` a second policy. A source is now named only for a host CSP's grammar can hold as
 * written (letters, digits and hyphens between dots, or an IP literal); any other is named by nothing.
 */
import { describe, expect, it } from 'vitest';
import { formActionSources, originSource } from '../src/authorize/pages/security-headers.js';
import { AUTHORIZE_PATH, authorizeQuery, call } from './helpers/direct-flow.js';
import { baseOptions, CLIENT_ID, makeSentinel } from './helpers/fixtures.js';

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

describe('CSP sources from an app-chosen redirect host', () => {
  it.each(HOSTILE)('%s adds no source, directive or policy to the login page', async (uri) => {
    const policy = await loginPolicy(uri);
    expect(policy).not.toContain(',');
    expect(policy.split('; ').map((directive) => directive.split(' ')[0])).toEqual([
      'default-src',
      'style-src',
      'img-src',
      'form-action',
      'frame-ancestors',
      'base-uri',
    ]);
    expect(/form-action ([^;]*)/.exec(policy)?.[1]).toBe("'self'");
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
