/**
 * The bearer guard's `scopes` (RFC 6750 §3.1, MCP authorization's scope challenge handling): a token that is
 * otherwise valid but lacks one of them is refused with 403 `insufficient_scope` and a challenge naming every scope
 * needed (and `resource_metadata` for a resource), by `verifyAccessToken`, `checkBearer` (on its cached path too) and
 * `requireAccessToken`; an invalid token is still 401 `invalid_token`; malformed `scopes` are a setup error.
 */
import { describe, expect, it } from 'vitest';
import { requireAccessToken } from '../adapters/fetch/index.js';
import { createSentinel, isOAuthError, type Sentinel } from '../src/index.js';
import { appTokenPath, baseOptions, ccBody, CLIENT_ID, CONSUMER_UUID, ACCOUNT } from './helpers/fixtures.js';
import { jsonOf, postForm, TOKEN_PATH } from './helpers/direct-flow.js';

const MCP = 'https://mcp.example.com/mcp';
const METADATA = 'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"';
const CHALLENGE = /^Bearer error="insufficient_scope", error_description="[^"]+", scope="files:read files:write"$/;

/** A sentinel whose confidential app is registered for `scope` (none when undefined), with the MCP resource's metadata. */
function sentinelWith(scope: string | undefined): Sentinel {
  const options = baseOptions({ defaultResources: [MCP] });
  options.apps = (options.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, scope } : app));
  const sentinel = createSentinel(options);
  sentinel.protectedResourceMetadata({ resource: MCP, accountId: ACCOUNT });
  return sentinel;
}

/** An app token of the confidential client for `extra` (`scope`, `resource`). */
async function appToken(sentinel: Sentinel, extra: Record<string, string> = {}): Promise<string> {
  const response = await postForm(sentinel, TOKEN_PATH, ccBody(extra));
  expect(response.status, response.body as string).toBe(200);
  return jsonOf(response).access_token as string;
}

describe('scopes', () => {
  it('verifyAccessToken refuses a token lacking a scope with 403 insufficient_scope naming every one needed', async () => {
    const sentinel = sentinelWith('files:read files:write');
    const token = await appToken(sentinel, { scope: 'files:read' });
    expect((await sentinel.verifyAccessToken(token, { scopes: ['files:read'] })).scope).toBe('files:read');
    const error: unknown = await sentinel.verifyAccessToken(token, { scopes: ['files:read', 'files:write'] }).catch((e: unknown) => e);
    expect(isOAuthError(error) && error.code).toBe('insufficient_scope');
    expect(isOAuthError(error) && error.status).toBe(403);
    expect(isOAuthError(error) && error.headers['www-authenticate']).toMatch(CHALLENGE);
  });

  it('checkBearer answers 403 with the challenge, resource_metadata included, on the full and the cached path', async () => {
    const sentinel = sentinelWith('files:read files:write');
    const token = await appToken(sentinel, { scope: 'files:read', resource: MCP });
    expect((await sentinel.checkBearer(`Bearer ${token}`, { resource: MCP, scopes: ['files:read'] })).ok).toBe(true);
    for (const path of ['cached', 'cached again']) {
      const result = await sentinel.checkBearer(`Bearer ${token}`, { resource: MCP, scopes: ['files:read', 'files:write'] });
      expect(result.ok, path).toBe(false);
      if (result.ok) return;
      expect(result.response.status).toBe(403);
      const challenge = result.response.headers['www-authenticate'];
      expect(challenge).toMatch(/^Bearer error="insufficient_scope", error_description="[^"]+", scope="files:read files:write", /);
      expect(challenge).toContain(METADATA);
      expect(JSON.parse(result.response.body as string)).toMatchObject({ error: 'insufficient_scope' });
    }
    // A fresh sentinel verifies the token on the full path first.
    const fresh = sentinelWith('files:read files:write');
    const other = await appToken(fresh, { scope: 'files:read' });
    const refused = await fresh.checkBearer(`Bearer ${other}`, { scopes: ['files:read', 'files:write'] });
    expect(refused.ok || refused.response.status).toBe(403);
    expect(refused.ok || refused.response.headers['www-authenticate']).toMatch(CHALLENGE);
  });

  it('still answers an invalid or foreign token with 401 invalid_token, not 403', async () => {
    const sentinel = sentinelWith('files:read');
    const token = await appToken(sentinel, { scope: 'files:read' });
    for (const [authorization, options] of [
      ['Bearer not-a-token', {}],
      [`Bearer ${token}`, { accountId: 'another-account' }],
      [`Bearer ${token}`, { resource: MCP }],
    ] as const) {
      const result = await sentinel.checkBearer(authorization, { ...options, scopes: ['files:write'] });
      expect(result.ok || result.response.status, authorization).toBe(401);
      expect(result.ok || result.response.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    }
  });

  it('holds a consumer-bound token to the scope of its app: an app registered with none meets no requirement', async () => {
    for (const [scope, expected] of [
      ['files:read files:write', 200],
      [undefined, 403],
    ] as const) {
      const sentinel = sentinelWith(scope);
      const response = await postForm(sentinel, appTokenPath(), ccBody());
      const token = jsonOf(response).access_token as string;
      const guard = requireAccessToken(sentinel, { scopes: ['files:write'] });
      const url = `https://api.example.com/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}`;
      const checked = await guard(new Request(url, { headers: { authorization: `Bearer ${token}` } }), {
        accountId: ACCOUNT,
        consumerId: CONSUMER_UUID,
      });
      expect(checked instanceof Response ? checked.status : 200, String(scope)).toBe(expected);
    }
  });

  it('refuses malformed scopes when the guard is built and when verifyAccessToken or checkBearer is called', async () => {
    const sentinel = sentinelWith('files:read');
    const token = await appToken(sentinel);
    for (const scopes of [[], ['two words'], ['quote"'], [''], 'files:read', [42]] as unknown as string[][]) {
      const label = JSON.stringify(scopes);
      expect(() => requireAccessToken(sentinel, { scopes }), label).toThrow(/requireAccessToken\.scopes/);
      await expect(sentinel.verifyAccessToken(token, { scopes }), label).rejects.toThrow(/verifyAccessToken\.scopes/);
      await expect(sentinel.checkBearer(`Bearer ${token}`, { scopes }), label).rejects.toThrow(/checkBearer\.scopes/);
    }
  });
});
