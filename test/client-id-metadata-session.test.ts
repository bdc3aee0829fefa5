/**
 * A client named by its metadata document is nobody's installation: anyone can publish a document naming their own
 * redirect URI. So a browser session never answers such a client's authorization request by itself: the user sees
 * the login page naming the agent and its host, and `prompt=none` gets `consent_required` (OpenID Connect Core
 * §3.1.2.4, §3.1.2.6), on the service's error page rather than by a redirect (RFC 9700 §4.11.2). Apps the account's operator registered still sign in silently.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT } from './helpers/fixtures.js';
import { authorizeQuery, call, signIn } from './helpers/direct-flow.js';
import { type ServedDocument, serveMetadataDocument, serviceWithDocuments } from './helpers/metadata-document.js';
import { pkcePair } from './helpers/pkce.js';

const AGENT_CALLBACK = 'http://127.0.0.1:9999/cb';
let document: ServedDocument;
let documentURL: string;

beforeAll(async () => {
  document = await serveMetadataDocument('Anyone', [AGENT_CALLBACK]);
  documentURL = document.url;
});

afterAll(() => document.close());

describe('a browser session and a client named by its metadata document', () => {
  it('never answers it silently: the login page, or consent_required with prompt=none; registered apps still do', async () => {
    // The service's own resolver has no test trust anchor: the same wrapper, on a resolver given the test's certificate.
    const sentinel = serviceWithDocuments(document);
    const { sessionCookie } = await signIn(sentinel);
    const headers = { cookie: `sentinel_session=${sessionCookie}` };
    const agentQuery = (extra: Record<string, string> = {}) =>
      authorizeQuery({
        client_id: documentURL,
        redirect_uri: AGENT_CALLBACK,
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
        ...extra,
      });
    const path = `/sentinel/api/account/${ACCOUNT}/authorize`;

    const asked = await call(sentinel, { path, headers, query: agentQuery() });
    expect(asked.status).toBe(302);
    expect(String(asked.headers.location)).toMatch(/\/login\?interaction=/);
    // The page names the agent by its self-chosen client_name and, beside it, the host of its URL, which the user
    // can check: the name alone ("Anyone" here, "Your Bank" elsewhere) is whatever its author wrote. (The resolver
    // puts the host in the app's name, apps/client-id-metadata.ts; the request keeps no separate host.)
    const page = await call(sentinel, {
      path: String(asked.headers.location).split('?')[0] as string,
      query: String(asked.headers.location).split('?')[1],
      headers,
    });
    expect(page.status).toBe(200);
    expect(page.body).toContain(`Anyone (${new URL(documentURL).host})`);

    // Shown, not redirected (RFC 9700 §4.11.2, client-id-metadata-redirector.test.ts): the answer the app would have
    // had is the page's one link, for the user to follow.
    const silent = await call(sentinel, { path, headers, query: agentQuery({ prompt: 'none' }) });
    expect(silent.status).toBe(400);
    expect(silent.headers.location).toBeUndefined();
    const answer = new URL(String(/<a href="([^"]*)"/.exec(String(silent.body))?.[1]).replaceAll('&amp;', '&'));
    expect(answer.origin + answer.pathname).toBe(AGENT_CALLBACK);
    expect(answer.searchParams.get('error')).toBe('consent_required');
    expect(answer.searchParams.get('code')).toBeNull();
    expect(answer.searchParams.get('state')).toBe('st-1');

    // The operator's app is still answered by the session.
    const own = await call(sentinel, {
      path,
      headers,
      query: authorizeQuery({ code_challenge: pkcePair().challenge, code_challenge_method: 'S256', prompt: 'none' }),
    });
    expect(new URL(String(own.headers.location)).searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
