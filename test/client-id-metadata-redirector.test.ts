/**
 * RFC 9700 §4.11.2: the authorization endpoint must not be an open redirector. Anyone can publish a client ID
 * metadata document whose redirect URIs point anywhere, so an error of such a client's request, which the browser
 * meets straight from a link before the user has seen any page of the service, is the service's own error page
 * (naming the app's host and the error, the redirect only a link the user may follow), never a redirect lent the
 * service's address. An error after the user acted on the login page that names the app's host (a cancel) still goes
 * back; the apps an operator registered keep their redirects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sentinel, SentinelEvent } from '../src/index.js';
import { ACCOUNT } from './helpers/fixtures.js';
import { authorizeQuery, call, openLogin, postLogin, signIn, startInteraction } from './helpers/direct-flow.js';
import { type ServedDocument, serveMetadataDocument, serviceWithDocuments as documentService } from './helpers/metadata-document.js';
import { pkcePair } from './helpers/pkce.js';

/** Where the document's author wants browsers to land, with the service's address as the last one they saw. */
const PHISH = 'https://phish.example/landing';
const AUTHORIZE = `/sentinel/api/account/${ACCOUNT}/authorize`;
let document: ServedDocument;
let documentURL: string;

beforeAll(async () => {
  document = await serveMetadataDocument('Your Bank', [PHISH]);
  documentURL = document.url;
});

afterAll(() => document.close());

function serviceWithDocuments(): { sentinel: Sentinel; events: SentinelEvent[] } {
  const events: SentinelEvent[] = [];
  return { sentinel: documentService(document, { onEvent: (e) => events.push(e) }), events };
}

const agentQuery = (extra: Record<string, string> = {}) =>
  authorizeQuery({
    client_id: documentURL,
    redirect_uri: PHISH,
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    ...extra,
  });

/** The one link of an error page, as the browser reads its href. */
function returnLink(body: string): URL {
  const hrefs = [...body.matchAll(/<a href="([^"]*)"/g)].map((match) => (match[1] as string).replaceAll('&amp;', '&'));
  expect(hrefs).toHaveLength(1);
  return new URL(hrefs[0] as string);
}

describe('errors of a client named by its metadata document, before the user has seen a page', () => {
  it('are an error page naming the app and the error, with a link back, never a redirect', async () => {
    const { sentinel, events } = serviceWithDocuments();
    const page = await call(sentinel, { path: AUTHORIZE, query: agentQuery({ response_type: 'x' }) });
    expect(page.status).toBe(400);
    expect(page.headers.location).toBeUndefined();
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    // The page keeps every page's defences: not framed, not cached.
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(String(page.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
    expect(page.headers['cache-control']).toMatch(/no-store/);
    expect(page.body).toContain(`<strong><bdi>${new URL(documentURL).host}</bdi></strong>`);
    expect(page.body).toContain('<code>unsupported_response_type</code>');
    expect(page.body).toContain('Return to <bdi>phish.example</bdi>');
    // The link is the error response the app would have had, for the user to follow if they choose.
    const link = returnLink(String(page.body));
    expect(link.origin + link.pathname).toBe(PHISH);
    expect(link.searchParams.get('error')).toBe('unsupported_response_type');
    expect(link.searchParams.get('state')).toBe('st-1');
    // Still refused and audited as before.
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'authorize.denied', clientId: documentURL, error: 'unsupported_response_type' }),
    );
  });

  it('covers prompt=none and a caller asking for JSON alike', async () => {
    const { sentinel } = serviceWithDocuments();
    const { sessionCookie } = await signIn(sentinel);
    const headers = { cookie: `sentinel_session=${sessionCookie}` };
    const silent = await call(sentinel, { path: AUTHORIZE, headers, query: agentQuery({ prompt: 'none' }) });
    expect(silent.status).toBe(400);
    expect(silent.headers.location).toBeUndefined();
    expect(returnLink(String(silent.body)).searchParams.get('error')).toBe('consent_required');
    const json = await call(sentinel, { path: AUTHORIZE, headers: { accept: 'application/json' }, query: agentQuery({ prompt: 'bogus' }) });
    expect(json.status).toBe(400);
    expect(json.headers.location).toBeUndefined();
    expect(JSON.parse(String(json.body)).error).toBe('invalid_request');
  });

  it('leave an error after the user acted on the login page naming the app to go back, and registered apps as they were', async () => {
    const { sentinel } = serviceWithDocuments();
    const { interaction } = await startInteraction(sentinel, agentQuery());
    const csrf = await openLogin(sentinel, interaction);
    const cancelled = await postLogin(sentinel, interaction, { csrf_token: csrf, cancel: '1' });
    expect(cancelled.status).toBe(303);
    const back = new URL(String(cancelled.headers.location));
    expect(back.origin + back.pathname).toBe(PHISH);
    expect(back.searchParams.get('error')).toBe('access_denied');
    const own = await call(sentinel, { path: AUTHORIZE, query: authorizeQuery({ response_type: 'x' }) });
    expect(own.status).toBe(302);
    expect(new URL(String(own.headers.location)).searchParams.get('error')).toBe('unsupported_response_type');
  });
});
