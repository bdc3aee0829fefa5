/**
 * RFC 8707 resource indicators: `resource` at the authorization endpoint (bound to the code, also through PAR), at
 * the token endpoint for every grant, the app's `resources` and the service's `defaultResources`, `invalid_target`,
 * `aud` = the resource, and the guard's `resource` expectation (RFC 9728 challenge included; only the account its
 * metadata names, RFC 9068 §4), in the core and behind each adapter's `requireAccessToken`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { createSentinel, type Sentinel, type Store } from '../src/index.js';
import {
  ACCOUNT,
  appTokenPath,
  baseOptions,
  basic,
  CC_ONLY_CLIENT_ID,
  CC_ONLY_SECRET,
  CLIENT_ID,
  CLIENT_SECRET,
  ISSUER,
  OTHER_ACCOUNT,
  OTHER_CLIENT_ID,
  OTHER_SECRET,
  PASSWORD,
  PUBLIC_CLIENT_ID,
  REDIRECT_URI,
  USERNAME,
} from './helpers/fixtures.js';
import {
  AUTHORIZE_PATH,
  ACCOUNT_PATH,
  authorizeQuery,
  call,
  jsonOf,
  openLogin,
  postForm,
  postLogin,
  recordingStore,
  startInteraction,
  TOKEN_PATH,
} from './helpers/direct-flow.js';
import { pkcePair } from './helpers/pkce.js';
import type { Registered } from './helpers/registration-client.js';
import { MemoryStore } from '../src/stores/memory.js';
import { BOT, botApp, TOKEN_EXCHANGE, TYPE } from './helpers/exchange.js';
import { HOSTS, MCP_METADATA_PATH, MCP_PATH, MCP_RESOURCE, type MountedHost } from './helpers/hosts.js';

const MCP = 'https://mcp.example.com/mcp';
const OTHER = 'https://tools.example.com/api';
const DEFAULT_ONLY = 'https://shared.example.com/mcp';
const METADATA_PARAM = 'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"';

function sentinelWithResources(store: Store = new MemoryStore()): Sentinel {
  const options = baseOptions({ store, defaultResources: [DEFAULT_ONLY] });
  // The confidential app may ask for two resources; the public app has none of its own (so the default list).
  options.apps = (options.apps ?? []).map((app) =>
    app.clientId === CLIENT_ID || app.clientId === CC_ONLY_CLIENT_ID ? { ...app, resources: [MCP, OTHER] } : app,
  );
  const sentinel = createSentinel(options);
  // As a host does: the metadata names the resources' authorization server, which their guards then hold tokens to.
  for (const resource of [MCP, OTHER]) sentinel.protectedResourceMetadata({ resource, accountId: ACCOUNT });
  return sentinel;
}

async function codeWith(sentinel: Sentinel, extra: Record<string, string>): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkcePair();
  const query = authorizeQuery({ code_challenge: challenge, code_challenge_method: 'S256' });
  for (const [name, value] of Object.entries(extra)) query.append(name.replace(/#.*/, ''), value);
  const { interaction } = await startInteraction(sentinel, query);
  const csrf = await openLogin(sentinel, interaction);
  const response = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  expect(response.status).toBe(303);
  return { code: new URL(String(response.headers.location)).searchParams.get('code') as string, verifier };
}

function exchange(sentinel: Sentinel, code: string, verifier: string, resources: string[] = []) {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT_URI,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  });
  for (const resource of resources) form.append('resource', resource);
  return postForm(sentinel, TOKEN_PATH, form.toString());
}

/** A client credentials token of OTHER_ACCOUNT's app, for a resource of the service's `defaultResources`. */
async function foreignToken(sentinel: Sentinel, resource: string): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', resource });
  const response = await postForm(sentinel, `/sentinel/api/account/${OTHER_ACCOUNT}/token`, form.toString(), {
    headers: { authorization: basic(OTHER_CLIENT_ID, OTHER_SECRET) },
  });
  const token = jsonOf(response).access_token as string;
  expect(decodeJwt(token)).toMatchObject({ iss: `${ISSUER}/sentinel/api/account/${OTHER_ACCOUNT}`, aud: resource });
  return token;
}

function clientCredentials(sentinel: Sentinel, resources: string[]) {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  for (const resource of resources) form.append('resource', resource);
  return postForm(sentinel, TOKEN_PATH, form.toString(), { headers: { authorization: basic(CC_ONLY_CLIENT_ID, CC_ONLY_SECRET) } });
}

describe('resource at the authorization endpoint', () => {
  it('binds the code to the resource: the token is for it, and for nothing else', async () => {
    const sentinel = sentinelWithResources();
    const { code, verifier } = await codeWith(sentinel, { resource: MCP });
    const response = await exchange(sentinel, code, verifier);
    expect(response.status, response.body).toBe(200);
    const token = jsonOf(response).access_token as string;
    expect(decodeJwt(token).aud).toBe(MCP);
    await expect(sentinel.verifyAccessToken(token, { resource: MCP })).resolves.toMatchObject({ aud: MCP });
    // Without the resource the guard wants the account's audience: the MCP server's token passes nowhere else.
    await expect(sentinel.verifyAccessToken(token, { accountId: ACCOUNT })).rejects.toMatchObject({ code: 'invalid_token' });
    await expect(sentinel.verifyAccessToken(token, { resource: OTHER })).rejects.toMatchObject({ code: 'invalid_token' });
  });

  it('refuses a resource the app may not ask for, with invalid_target back to the app, and stores nothing', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWithResources(store);
    for (const resource of [
      'https://evil.example.com/mcp',
      DEFAULT_ONLY,
      'https://mcp.example.com/mcp#frag',
      'relative/path',
      'ftp://mcp.example.com/',
    ]) {
      store.reset();
      const query = authorizeQuery({ resource });
      const response = await call(sentinel, { path: AUTHORIZE_PATH, query });
      expect(response.status, resource).toBe(302);
      const location = new URL(String(response.headers.location));
      expect(location.origin + location.pathname).toBe(REDIRECT_URI);
      expect(location.searchParams.get('error'), resource).toBe('invalid_target');
      expect(store.writes, resource).toEqual([]);
    }
  });

  it('takes a resource without a value as no resource (RFC 6749 §3.1), beside a valued one or alone', async () => {
    const sentinel = sentinelWithResources();
    const { code, verifier } = await codeWith(sentinel, { resource: '', 'resource#2': MCP });
    const response = await exchange(sentinel, code, verifier, ['']);
    expect(response.status, response.body).toBe(200);
    expect(decodeJwt(jsonOf(response).access_token as string).aud).toBe(MCP);
    const plain = await codeWith(sentinel, { resource: '' });
    const unbound = await exchange(sentinel, plain.code, plain.verifier);
    expect(unbound.status, unbound.body).toBe(200);
    expect(decodeJwt(jsonOf(unbound).access_token as string).aud).toBe(ACCOUNT);
  });

  it('lets an app without resources of its own ask for the default ones only', async () => {
    const sentinel = sentinelWithResources();
    const { challenge } = pkcePair();
    const base = { client_id: PUBLIC_CLIENT_ID, code_challenge: challenge, code_challenge_method: 'S256' };
    const allowed = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ ...base, resource: DEFAULT_ONLY }) });
    expect(String(allowed.headers.location)).toContain('/login?interaction=');
    const refused = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ ...base, resource: MCP }) });
    expect(new URL(String(refused.headers.location)).searchParams.get('error')).toBe('invalid_target');
  });

  it('goes through PAR too: the pushed resource binds the code', async () => {
    const sentinel = sentinelWithResources();
    const bad = await postForm(
      sentinel,
      `${ACCOUNT_PATH}/par`,
      new URLSearchParams({ response_type: 'code', redirect_uri: REDIRECT_URI, resource: 'https://evil.example.com/' }).toString(),
      { headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET) } },
    );
    expect(bad.status).toBe(400);
    expect(jsonOf(bad).error).toBe('invalid_target');
    const { verifier, challenge } = pkcePair();
    const pushed = await postForm(
      sentinel,
      `${ACCOUNT_PATH}/par`,
      new URLSearchParams({
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        resource: OTHER,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }).toString(),
      { headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET) } },
    );
    expect(pushed.status, pushed.body).toBe(201);
    const requestUri = jsonOf(pushed).request_uri as string;
    const { interaction } = await startInteraction(sentinel, new URLSearchParams({ client_id: CLIENT_ID, request_uri: requestUri }));
    const csrf = await openLogin(sentinel, interaction);
    const signedIn = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
    const code = new URL(String(signedIn.headers.location)).searchParams.get('code') as string;
    const response = await exchange(sentinel, code, verifier);
    expect(decodeJwt(jsonOf(response).access_token as string).aud).toBe(OTHER);
  });
});

/** The bot exchanging `subject` for a delegated token (RFC 8693), with `extra` parameters. */
function delegateAsBot(sentinel: Sentinel, subject: string, extra: Record<string, string>) {
  return postForm(
    sentinel,
    TOKEN_PATH,
    new URLSearchParams({
      grant_type: TOKEN_EXCHANGE,
      subject_token: subject,
      subject_token_type: TYPE.accessToken,
      ...BOT,
      ...extra,
    }).toString(),
  );
}

describe('resource at the token endpoint', () => {
  it('authorization_code: a subset of the code resources narrows aud; another resource is invalid_target and leaves the code', async () => {
    const sentinel = sentinelWithResources();
    const { code, verifier } = await codeWith(sentinel, { resource: MCP, 'resource#2': OTHER });
    const refused = await exchange(sentinel, code, verifier, [DEFAULT_ONLY]);
    expect(refused.status).toBe(400);
    expect(jsonOf(refused).error).toBe('invalid_target');
    // The code survived the refusal: the rightful request still redeems it.
    const narrowed = await exchange(sentinel, code, verifier, [OTHER]);
    expect(narrowed.status, narrowed.body).toBe(200);
    expect(decodeJwt(jsonOf(narrowed).access_token as string).aud).toBe(OTHER);
  });

  it('authorization_code: a code asked without resource cannot be turned into a resource token', async () => {
    const sentinel = sentinelWithResources();
    const { code, verifier } = await codeWith(sentinel, {});
    const refused = await exchange(sentinel, code, verifier, [MCP]);
    expect(jsonOf(refused).error).toBe('invalid_target');
    const plain = await exchange(sentinel, code, verifier);
    expect(decodeJwt(jsonOf(plain).access_token as string).aud).toBe(ACCOUNT);
  });

  it('authorization_code: both resources of the code make an aud array', async () => {
    const sentinel = sentinelWithResources();
    const { code, verifier } = await codeWith(sentinel, { resource: MCP, 'resource#2': OTHER });
    const response = await exchange(sentinel, code, verifier);
    const token = jsonOf(response).access_token as string;
    expect(decodeJwt(token).aud).toEqual([MCP, OTHER]);
    await expect(sentinel.verifyAccessToken(token, { resource: OTHER })).resolves.toBeTruthy();
  });

  it('refresh_token: the grant keeps the resources; a refresh may name one of them, never another', async () => {
    const sentinel = sentinelWithResources();
    const { code, verifier } = await codeWith(sentinel, { resource: MCP });
    const tokens = jsonOf(await exchange(sentinel, code, verifier));
    const form = (extra: Record<string, string>) =>
      new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token as string,
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        ...extra,
      }).toString();
    const refused = await postForm(sentinel, TOKEN_PATH, form({ resource: OTHER }));
    expect(refused.status).toBe(400);
    expect(jsonOf(refused).error).toBe('invalid_target');
    // Still current after the refusal: the same refresh token rotates.
    const refreshed = await postForm(sentinel, TOKEN_PATH, form({}));
    expect(refreshed.status, refreshed.body).toBe(200);
    expect(decodeJwt(jsonOf(refreshed).access_token as string).aud).toBe(MCP);
  });

  it('client_credentials: aud is the resource; an unknown or malformed one is invalid_target', async () => {
    const sentinel = sentinelWithResources();
    const ok = await clientCredentials(sentinel, [MCP]);
    expect(ok.status, ok.body).toBe(200);
    const token = jsonOf(ok).access_token as string;
    expect(decodeJwt(token).aud).toBe(MCP);
    await expect(sentinel.verifyAccessToken(token, { resource: MCP })).resolves.toBeTruthy();
    for (const resource of ['https://evil.example.com/', 'https://mcp.example.com/mcp#x', 'not a uri', 'urn:example:mcp']) {
      const refused = await clientCredentials(sentinel, [resource]);
      expect(refused.status, resource).toBe(400);
      expect(jsonOf(refused).error, resource).toBe('invalid_target');
    }
    const many = await clientCredentials(
      sentinel,
      Array.from({ length: 11 }, (_, index) => `${MCP}/${index}`),
    );
    expect(jsonOf(many).error).toBe('invalid_target');
  });

  it('client_credentials: a resource without a value is no resource (RFC 6749 §3.1), not invalid_target', async () => {
    const sentinel = sentinelWithResources();
    const omitted = await clientCredentials(sentinel, ['']);
    expect(omitted.status, omitted.body).toBe(200);
    expect(decodeJwt(jsonOf(omitted).access_token as string).aud).toBe(ACCOUNT);
    const beside = await clientCredentials(sentinel, ['', MCP]);
    expect(beside.status, beside.body).toBe(200);
    expect(decodeJwt(jsonOf(beside).access_token as string).aud).toBe(MCP);
  });

  it('the v2 consumer-bound path refuses resource instead of issuing a broader token', async () => {
    const sentinel = sentinelWithResources();
    const response = await postForm(
      sentinel,
      appTokenPath(),
      new URLSearchParams({ grant_type: 'client_credentials', resource: MCP }).toString(),
      {
        headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET) },
      },
    );
    expect(response.status).toBe(400);
    expect(jsonOf(response).error).toBe('invalid_target');
  });

  it('the v1 app token path refuses resource, allowed or not, instead of issuing for the account audience', async () => {
    const sentinel = sentinelWithResources();
    const v1 = (form: Record<string, string>, authorization = basic(CC_ONLY_CLIENT_ID, CC_ONLY_SECRET)) =>
      postForm(sentinel, `${ACCOUNT_PATH}/app/token`, new URLSearchParams({ grant_type: 'client_credentials', ...form }).toString(), {
        headers: { authorization },
      });
    // The app may ask for MCP at the token endpoint; here every resource is told it is not accepted, never ignored.
    for (const resource of [MCP, 'https://evil.example.com/', 'not a uri', '']) {
      const refused = await v1({ resource });
      expect(refused.status, resource).toBe(400);
      expect(jsonOf(refused).error, resource).toBe('invalid_target');
    }
    // Checked after client authentication: a wrong secret learns nothing about resource.
    const unauthenticated = await v1({ resource: MCP }, basic(CC_ONLY_CLIENT_ID, 'wrong'));
    expect(jsonOf(unauthenticated).error).toBe('invalid_client');
    // Without resource the v1 token is what it always was: for the account's audience.
    const ok = await v1({});
    expect(ok.status, ok.body).toBe(200);
    expect(decodeJwt(jsonOf(ok).access_token as string).aud).toBe(ACCOUNT);
  });

  it('token exchange: the new token may name some of the subject token resources, never another', async () => {
    const THIRD = 'https://third.example.com/mcp';
    const options = baseOptions({ defaultResources: [DEFAULT_ONLY] });
    options.apps = [
      ...(options.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, resources: [MCP, OTHER] } : app)),
      // The acting client may ask for THIRD itself; the subject token is not for it, so the exchange may not add it.
      botApp({ resources: [MCP, OTHER, THIRD] }),
    ];
    const sentinel = createSentinel(options);
    sentinel.protectedResourceMetadata({ resource: MCP, accountId: ACCOUNT });
    const { code, verifier } = await codeWith(sentinel, { resource: MCP, 'resource#2': OTHER });
    const subject = jsonOf(await exchange(sentinel, code, verifier)).access_token as string;
    const delegate = (extra: Record<string, string>) => delegateAsBot(sentinel, subject, extra);
    const narrowed = await delegate({ resource: MCP });
    expect(narrowed.status, narrowed.body).toBe(200);
    const token = jsonOf(narrowed).access_token as string;
    expect(decodeJwt(token)).toMatchObject({ aud: MCP, act: { sub: BOT.client_id } });
    await expect(sentinel.verifyAccessToken(token, { resource: MCP })).resolves.toBeTruthy();
    await expect(sentinel.verifyAccessToken(token, { resource: OTHER })).rejects.toMatchObject({ code: 'invalid_token' });
    for (const resource of [THIRD, DEFAULT_ONLY, 'https://mcp.example.com/mcp#x']) {
      const refused = await delegate({ resource });
      expect(refused.status, resource).toBe(400);
      expect(jsonOf(refused).error, resource).toBe('invalid_target');
    }
    // Without resource the exchanged token keeps every resource of its subject.
    expect(decodeJwt(jsonOf(await delegate({})).access_token as string).aud).toEqual([MCP, OTHER]);
  });

  it('token exchange: an acting app not allowed the subject token resources gets none of them, however it asks', async () => {
    const options = baseOptions({ defaultResources: [DEFAULT_ONLY] });
    options.apps = [
      ...(options.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, resources: [MCP] } : app)),
      botApp({ resources: [OTHER] }),
    ];
    const sentinel = createSentinel(options);
    const { code, verifier } = await codeWith(sentinel, { resource: MCP });
    const subject = jsonOf(await exchange(sentinel, code, verifier)).access_token as string;
    for (const extra of [{ resource: MCP }, { audience: MCP }, {}] as Record<string, string>[]) {
      const refused = await delegateAsBot(sentinel, subject, extra);
      expect(jsonOf(refused).error, JSON.stringify(extra)).toBe('invalid_target');
    }
  });

  it('introspection still describes a resource-bound token to its client', async () => {
    const sentinel = sentinelWithResources();
    const token = jsonOf(await clientCredentials(sentinel, [MCP])).access_token as string;
    const response = await postForm(sentinel, `${TOKEN_PATH}/introspect`, new URLSearchParams({ token }).toString(), {
      headers: { authorization: basic(CC_ONLY_CLIENT_ID, CC_ONLY_SECRET) },
    });
    expect(jsonOf(response)).toMatchObject({ active: true, aud: MCP });
  });
});

describe('the guard with a resource', () => {
  it('answers 401 with resource_metadata, and refuses a token for another resource', async () => {
    const sentinel = sentinelWithResources();
    const missing = await sentinel.checkBearer(undefined, { resource: MCP });
    expect(missing.ok).toBe(false);
    if (missing.ok) return;
    expect(missing.response.status).toBe(401);
    // Both schemes, each naming the metadata; Bearer first, where MCP clients look for it (RFC 9449 §7.1).
    expect(missing.response.headers['www-authenticate']).toBe(
      `Bearer realm="sentinel", ${METADATA_PARAM}, DPoP algs="ES256 ES384 EdDSA RS256 PS256", ${METADATA_PARAM}`,
    );
    const other = jsonOf(await clientCredentials(sentinel, [OTHER])).access_token as string;
    // Twice: the second answer comes from the verified-token cache, which must refuse it as well.
    for (let round = 0; round < 2; round++) {
      const refused = await sentinel.checkBearer(`Bearer ${other}`, { resource: MCP });
      expect(refused.ok).toBe(false);
      if (refused.ok) return;
      expect(refused.response.status).toBe(401);
      expect(refused.response.headers['www-authenticate']).toMatch(
        /^Bearer realm="sentinel", resource_metadata="https:\/\/mcp\.example\.com\/\.well-known\/oauth-protected-resource\/mcp", error="invalid_token"/,
      );
    }
    const mine = jsonOf(await clientCredentials(sentinel, [MCP])).access_token as string;
    expect((await sentinel.checkBearer(`Bearer ${mine}`, { resource: MCP })).ok).toBe(true);
    // A token for the account's audience is not for the MCP server either.
    const plain = jsonOf(await clientCredentials(sentinel, [])).access_token as string;
    expect((await sentinel.checkBearer(`Bearer ${plain}`, { resource: MCP })).ok).toBe(false);
  });

  it("refuses another account's token for the resource, though its aud names it: only the metadata's account issues for it", async () => {
    // defaultResources are the whole service's: every account's apps may ask for the MCP server.
    const sentinel = createSentinel(baseOptions({ defaultResources: [MCP] }));
    sentinel.protectedResourceMetadata({ resource: MCP, accountId: ACCOUNT });
    const foreign = await foreignToken(sentinel, MCP);
    // Twice: the second answer comes from the verified-token cache, which must refuse it as well.
    for (let round = 0; round < 2; round++) {
      const refused = await sentinel.checkBearer(`Bearer ${foreign}`, { resource: MCP });
      expect(refused.ok).toBe(false);
      if (refused.ok) return;
      expect(refused.response.status).toBe(401);
      expect(refused.response.headers['www-authenticate']).toMatch(
        /^Bearer realm="sentinel", resource_metadata="https:\/\/mcp\.example\.com\/\.well-known\/oauth-protected-resource\/mcp", error="invalid_token"/,
      );
    }
    await expect(sentinel.verifyAccessToken(foreign, { resource: MCP })).rejects.toMatchObject({ code: 'invalid_token' });
    const mine = jsonOf(await clientCredentials(sentinel, [MCP])).access_token as string;
    expect((await sentinel.checkBearer(`Bearer ${mine}`, { resource: MCP })).ok).toBe(true);
  });

  it('without metadata, holds the token to the accountId it is given; with neither, the resource is a ConfigurationError', async () => {
    const sentinel = createSentinel(baseOptions({ defaultResources: [MCP] }));
    const foreign = await foreignToken(sentinel, MCP);
    // The apps option holds two accounts: nothing says which one is the resource's authorization server.
    await expect(sentinel.checkBearer(`Bearer ${foreign}`, { resource: MCP })).rejects.toMatchObject({
      code: 'ERR_SENTINEL_CONFIGURATION',
      field: 'resource',
    });
    await expect(sentinel.verifyAccessToken(foreign, { resource: MCP })).rejects.toMatchObject({ field: 'resource' });
    expect((await sentinel.checkBearer(`Bearer ${foreign}`, { resource: MCP, accountId: OTHER_ACCOUNT })).ok).toBe(true);
    expect((await sentinel.checkBearer(`Bearer ${foreign}`, { resource: MCP, accountId: ACCOUNT })).ok).toBe(false);
  });

  it('names the metadata in its step-up and DPoP challenges too (RFC 9728 §5.1)', async () => {
    const sentinel = sentinelWithResources();
    // An app's own token has no sign-in behind it, so it meets no acr requirement.
    const mine = jsonOf(await clientCredentials(sentinel, [MCP])).access_token as string;
    const stepUp = await sentinel.checkBearer(`Bearer ${mine}`, { resource: MCP, acrValues: 'urn:sentinel:acr:mfa' });
    expect(stepUp.ok).toBe(false);
    if (stepUp.ok) return;
    expect(stepUp.response.status).toBe(401);
    expect(stepUp.response.headers['www-authenticate']).toBe(
      `Bearer error="insufficient_user_authentication", error_description="a stronger authentication level is required", acr_values="urn:sentinel:acr:mfa", ${METADATA_PARAM}`,
    );
    // An unbound token presented with the DPoP scheme: refused with the DPoP challenge (RFC 9449 §7.1).
    const dpop = await sentinel.checkBearer(`DPoP ${mine}`, { resource: MCP });
    expect(dpop.ok).toBe(false);
    if (dpop.ok) return;
    expect(dpop.response.status).toBe(401);
    expect(dpop.response.headers['www-authenticate']).toMatch(
      new RegExp(`^DPoP algs="[^"]+", error="invalid_token", .*, ${METADATA_PARAM}$`),
    );
    // A guard without a resource has no metadata to name.
    const plain = await sentinel.checkBearer(`DPoP ${mine}`, { accountId: ACCOUNT });
    expect(!plain.ok && plain.response.headers['www-authenticate']).not.toContain('resource_metadata');
  });

  it('refuses a misspelled or malformed resource expectation', async () => {
    const sentinel = sentinelWithResources();
    await expect(sentinel.verifyAccessToken('x', { resourse: MCP } as never)).rejects.toThrow(/resourse/);
    const { expectationsReader } = await import('../src/guard/bearer-request.js');
    expect(() => expectationsReader({ resource: 'https://mcp.example.com/#f' })).toThrow(/fragment/);
  });

  it('refuses a malformed resource given to verifyAccessToken as checkBearer does, whatever the token', async () => {
    const options = baseOptions();
    const sentinel = createSentinel({ ...options, apps: (options.apps ?? []).filter((app) => app.accountId === ACCOUNT) });
    const token = jsonOf(await clientCredentials(sentinel, [])).access_token as string;
    // The account id is the account's audience: as a resource it passed the audience check of the account's tokens,
    // and the apps option's one account stood for its authorization server, so the account's every token passed.
    for (const resource of [ACCOUNT, 'https://mcp.example.com/#f', 'mcp', new URL(MCP)]) {
      await expect(sentinel.verifyAccessToken(token, { resource } as never), String(resource)).rejects.toMatchObject({
        name: 'ConfigurationError',
        field: 'verifyAccessToken.resource',
      });
    }
    await expect(sentinel.verifyAccessToken(token, { accountId: ACCOUNT })).resolves.toMatchObject({ aud: ACCOUNT });
  });
});

describe.each(HOSTS)('the MCP route of the $name host (requireAccessToken with resource, beside its metadata)', (host) => {
  let mounted: MountedHost | undefined;
  afterEach(async () => {
    await mounted?.close();
    mounted = undefined;
  });

  it("accepts the token of the account the metadata names, and refuses another account's for the same resource", async () => {
    const sentinel = createSentinel(baseOptions({ defaultResources: [MCP_RESOURCE] }));
    mounted = await host.mount(sentinel);
    const metadata = await fetch(`${mounted.url}${MCP_METADATA_PATH}`);
    expect(await metadata.json()).toMatchObject({ authorization_servers: [`${ISSUER}${ACCOUNT_PATH}`] });
    const foreign = await foreignToken(sentinel, MCP_RESOURCE);
    const refused = await fetch(`${mounted.url}${MCP_PATH}`, { headers: { authorization: `Bearer ${foreign}` } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="sentinel", resource_metadata="https:\/\/mcp\.example\.com\/\.well-known\/oauth-protected-resource\/mcp", error="invalid_token"/,
    );
    const mine = jsonOf(await clientCredentials(sentinel, [MCP_RESOURCE])).access_token as string;
    const accepted = await fetch(`${mounted.url}${MCP_PATH}`, { headers: { authorization: `Bearer ${mine}` } });
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ claims: { aud: MCP_RESOURCE, iss: `${ISSUER}${ACCOUNT_PATH}` } });
  });

  it('names the metadata in its DPoP challenge too (RFC 9728 §5.1)', async () => {
    const sentinel = createSentinel(baseOptions({ defaultResources: [MCP_RESOURCE] }));
    mounted = await host.mount(sentinel);
    const mine = jsonOf(await clientCredentials(sentinel, [MCP_RESOURCE])).access_token as string;
    const refused = await fetch(`${mounted.url}${MCP_PATH}`, { headers: { authorization: `DPoP ${mine}` } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(
      new RegExp(`^DPoP algs="[^"]+", error="invalid_token", .*, ${METADATA_PARAM}$`),
    );
  });
});

describe('configuration', () => {
  it('refuses resources that are not resource indicators', () => {
    const options = baseOptions();
    const apps = options.apps ?? [];
    expect(() => createSentinel({ ...options, apps: [{ ...apps[0], resources: ['https://mcp.example.com/#f'] } as never] })).toThrow(
      /apps\[0\]\.resources\[0\].*fragment/,
    );
    expect(() => createSentinel(baseOptions({ defaultResources: ['mcp.example.com'] }))).toThrow(/defaultResources/);
  });

  it('refuses a string audience that is also a resource an app may ask for', () => {
    const resource = 'https://mcp.example.com/mcp';
    expect(() => createSentinel(baseOptions({ audience: resource, defaultResources: [resource] }))).toThrow(/audience.*defaultResources/);
    const options = baseOptions({ audience: resource });
    const apps = (options.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, resources: [resource] } : app));
    expect(() => createSentinel({ ...options, apps })).toThrow(new RegExp(`audience.*app ${CLIENT_ID}`));
    // Another resource, or an audience that names none, is fine; a function audience is the host's to keep apart.
    expect(() => createSentinel(baseOptions({ audience: 'https://api.example.com', defaultResources: [resource] }))).not.toThrow();
    expect(() => createSentinel(baseOptions({ audience: () => resource, defaultResources: [resource] }))).not.toThrow();
  });

  it('refuses protected resource metadata that would share its mount path with another resource', () => {
    const sentinel = createSentinel(baseOptions());
    const build = (resource: string) => () => sentinel.protectedResourceMetadata({ resource, accountId: ACCOUNT });
    // A route matches the path only: resources told apart by their query would get one handler, answering for both.
    for (const resource of ['https://mcp.example.com/mcp?tenant=a', 'https://mcp.example.com/?tenant=b']) {
      expect(build(resource), resource).toThrow(expect.objectContaining({ field: 'protectedResourceMetadata.resource' }));
      expect(build(resource), resource).toThrow(/query/);
    }
    // RFC 9728 §3.1 drops the slash after a bare host, so these two spellings share one metadata URL: the first wins.
    const bare = build('https://mcp.example.com')();
    expect([bare.url, bare.path]).toEqual([
      'https://mcp.example.com/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource',
    ]);
    expect(build('https://mcp.example.com')().document.resource).toBe('https://mcp.example.com');
    expect(build('https://mcp.example.com/')).toThrow(/of https:\/\/mcp\.example\.com, .*one spelling/);
    // Another service is another set of paths.
    const other = createSentinel(baseOptions()).protectedResourceMetadata({ resource: 'https://mcp.example.com/', accountId: ACCOUNT });
    expect(other.document.resource).toBe('https://mcp.example.com/');
  });

  it('refuses protected resource metadata options it cannot honour, before naming any account', () => {
    // The apps option holds one account: a misspelled accountId fell back to it, so the document named (and the guard
    // took the tokens of) that account instead of the one meant.
    const options = baseOptions();
    const sentinel = createSentinel({ ...options, apps: (options.apps ?? []).filter((app) => app.accountId === ACCOUNT) });
    const build = (metadata: Record<string, unknown>) => () => sentinel.protectedResourceMetadata(metadata as never);
    expect(build({ resource: MCP, accountID: OTHER_ACCOUNT })).toThrow(
      expect.objectContaining({ name: 'ConfigurationError', field: 'protectedResourceMetadata.accountID' }),
    );
    const refusals: [Record<string, unknown>, string][] = [
      [{ resource: MCP, accountId: ACCOUNT, scopesSupported: 'mcp:tools' }, 'protectedResourceMetadata.scopesSupported'],
      [{ resource: MCP, accountId: ACCOUNT, scopesSupported: ['mcp:tools', 'two words'] }, 'protectedResourceMetadata.scopesSupported'],
      [{ resource: MCP, accountId: 123 }, 'protectedResourceMetadata.accountId'],
      [{ resource: MCP, accountId: 'a/b' }, 'protectedResourceMetadata.accountId'],
      [{ accountId: ACCOUNT }, 'protectedResourceMetadata.resource'],
      [{ resource: new URL(MCP), accountId: ACCOUNT }, 'protectedResourceMetadata.resource'],
    ];
    for (const [metadata, field] of refusals) {
      expect(build(metadata), JSON.stringify(metadata)).toThrow(expect.objectContaining({ name: 'ConfigurationError', field }));
    }
    expect(build({ resource: MCP, accountId: ACCOUNT, scopesSupported: ['mcp:tools'] })().document.scopes_supported).toEqual(['mcp:tools']);
  });
});

describe('RFC 7591 registration', () => {
  it('keeps resources that narrow the defaults, refuses any other, and echoes them', async () => {
    const { MemoryAppStore } = await import('../src/index.js');
    const { postRegistration, INITIAL_ACCESS_TOKEN } = await import('./helpers/registration-client.js');
    const options = baseOptions({ defaultResources: [MCP, OTHER] });
    const sentinel = createSentinel({
      ...options,
      apps: [],
      appStore: new MemoryAppStore(createSentinel(options).config.apps),
      registration: { initialAccessToken: INITIAL_ACCESS_TOKEN },
    });
    const client = { redirect_uris: ['https://agent.example.com/cb'], token_endpoint_auth_method: 'none' };
    const ok = await postRegistration(sentinel, { ...client, resources: [MCP] });
    expect(ok.status, ok.body).toBe(201);
    expect(jsonOf(ok).resources).toEqual([MCP]);
    const outside = await postRegistration(sentinel, { ...client, resources: ['https://elsewhere.example.com/'] });
    expect(outside.status).toBe(400);
    expect(jsonOf(outside)).toMatchObject({ error: 'invalid_client_metadata' });
    expect(String(jsonOf(outside).error_description)).toMatch(/^resources /);
    const malformed = await postRegistration(sentinel, { ...client, resources: ['https://mcp.example.com/#x'] });
    expect(jsonOf(malformed).error_description).toBe('resources[0] must not contain a fragment');
    // The registered client may then ask for its resource, and not for the other default one.
    const registered = jsonOf(ok);
    const { challenge } = pkcePair();
    const base = {
      client_id: registered.client_id as string,
      redirect_uri: 'https://agent.example.com/cb',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
    const refused = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ ...base, resource: OTHER }) });
    expect(new URL(String(refused.headers.location)).searchParams.get('error')).toBe('invalid_target');
    const allowed = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ ...base, resource: MCP }) });
    expect(String(allowed.headers.location)).toContain('/login?interaction=');
  });

  it('an update (RFC 7592 PUT) narrows the resources a client has, never widens them, even by leaving them out', async () => {
    const { MemoryAppStore } = await import('../src/index.js');
    const { postRegistration, manageClient, INITIAL_ACCESS_TOKEN } = await import('./helpers/registration-client.js');
    const options = baseOptions({ defaultResources: [MCP, OTHER] });
    const apps = new MemoryAppStore(createSentinel(options).config.apps);
    const sentinel = createSentinel({ ...options, apps: [], appStore: apps, registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
    const registered = jsonOf(await postRegistration(sentinel, { grant_types: ['client_credentials'] })) as unknown as Registered;
    const clientId = registered.client_id;
    // The operator narrows it to one resource.
    const stored = await apps.findApp(ACCOUNT, clientId);
    await apps.updateApp({ ...(stored as NonNullable<typeof stored>), resources: [MCP] });
    const body = { client_id: clientId, grant_types: ['client_credentials'] };
    for (const widening of [body, { ...body, resources: [MCP, OTHER] }]) {
      const put = await manageClient(sentinel, 'PUT', registered, { body: widening });
      expect(put.status).toBe(400);
      expect(jsonOf(put)).toMatchObject({ error: 'invalid_client_metadata' });
      expect((await apps.findApp(ACCOUNT, clientId))?.resources).toEqual([MCP]);
    }
    const kept = await manageClient(sentinel, 'PUT', registered, { body: { ...body, resources: [MCP] } });
    expect(kept.status, kept.body).toBe(200);
  });

  it('an update keeps a resource outside the defaults that an operator gave the client, and adds none', async () => {
    const { MemoryAppStore } = await import('../src/index.js');
    const { postRegistration, manageClient, INITIAL_ACCESS_TOKEN } = await import('./helpers/registration-client.js');
    const options = baseOptions({ defaultResources: [MCP] });
    const apps = new MemoryAppStore(createSentinel(options).config.apps);
    const sentinel = createSentinel({ ...options, apps: [], appStore: apps, registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
    const registered = jsonOf(await postRegistration(sentinel, { grant_types: ['client_credentials'] })) as unknown as Registered;
    const clientId = registered.client_id;
    // The operator gives it a resource that is not a default one.
    await apps.patchApp(ACCOUNT, clientId, () => ({ resources: [MCP, OTHER] }));
    const body = { client_id: clientId, grant_types: ['client_credentials'], client_name: 'Renamed' };
    // The client renames itself, sending the list it has (RFC 7592 §2.2 replaces every field), and keeps it.
    const renamed = await manageClient(sentinel, 'PUT', registered, { body: { ...body, resources: [MCP, OTHER] } });
    expect(renamed.status, renamed.body).toBe(200);
    expect(jsonOf(renamed)).toMatchObject({ client_name: 'Renamed', resources: [MCP, OTHER] });
    expect((await apps.findApp(ACCOUNT, clientId))?.resources).toEqual([MCP, OTHER]);
    // Narrowing to the operator's resource alone is an update too; a resource it was never given is still refused.
    const narrowed = await manageClient(sentinel, 'PUT', registered, { body: { ...body, resources: [OTHER] } });
    expect(narrowed.status, narrowed.body).toBe(200);
    const widened = await manageClient(sentinel, 'PUT', registered, { body: { ...body, resources: [OTHER, MCP] } });
    expect(widened.status).toBe(400);
    expect(jsonOf(widened)).toMatchObject({ error: 'invalid_client_metadata' });
    expect((await apps.findApp(ACCOUNT, clientId))?.resources).toEqual([OTHER]);
  });
});
