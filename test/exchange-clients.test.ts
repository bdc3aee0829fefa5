/**
 * Real clients, unmodified, against both exchange grants on every host of test/helpers/hosts.ts: openid-client 6
 * (`genericGrantRequest`) and oauth4webapi (`genericTokenEndpointRequest`, its generic grant request) send the
 * brand's JWT by RFC 7523 and by RFC 8693, then a bot delegates the consumer token; the guarded host route gets
 * the claims with `act`, and an outside validator (jose `createRemoteJWKSet` on the published JWKS) accepts every
 * token. The brand's keys are fetched from its own `jwksUri` (a local server: `clientJwks.allowPrivateAddresses`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSentinel } from '../src/index.js';
import { ACCOUNT, baseOptions, CLIENT_SECRET, CONSUMER_UUID } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import {
  ACCOUNT_ISSUER,
  BOT_CLIENT_ID,
  BRAND_ISSUER,
  brandJWT,
  brandKey,
  exchangeOptions,
  JWT_BEARER,
  TOKEN_EXCHANGE,
  TYPE,
} from './helpers/exchange.js';

const key = await brandKey();
let brandServer: Server;
let brandJwksUri = '';

beforeAll(async () => {
  // The brand's identity provider publishes its public key, as a real one does.
  brandServer = createServer((_request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ keys: [key.publicJwk] }));
  });
  await new Promise<void>((resolve) => brandServer.listen(0, '127.0.0.1', resolve));
  brandJwksUri = `http://127.0.0.1:${(brandServer.address() as AddressInfo).port}/jwks.json`;
});
afterAll(() => {
  brandServer.close();
});

const open: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

/** The issuer is http://localhost; the server listens on an ephemeral port: route the library's requests there. */
function via(url: string): typeof fetch {
  return ((target: string, init: RequestInit) => fetch(String(target).replace('http://localhost', url), init)) as typeof fetch;
}

function sentinel() {
  return createSentinel(
    baseOptions({
      ...exchangeOptions(key),
      trustedIssuers: [{ accountId: ACCOUNT, issuer: BRAND_ISSUER, jwksUri: brandJwksUri }],
      clientJwks: { allowPrivateAddresses: true },
    }),
  );
}

/** What an outside resource server does with a token: verify it against the published JWKS with jose alone. */
async function verifiedOutside(mounted: MountedHost, token: string): Promise<Record<string, unknown>> {
  // The jwks_uri the account's metadata publishes, reached on the test server's port.
  const metadata = (await (
    await fetch(`${mounted.url}/.well-known/oauth-authorization-server/sentinel/api/account/${ACCOUNT}`)
  ).json()) as {
    jwks_uri: string;
  };
  const jwks = createRemoteJWKSet(new URL(metadata.jwks_uri.replace('http://localhost', mounted.url)));
  const { payload } = await jwtVerify(token, jwks, { issuer: ACCOUNT_ISSUER, audience: ACCOUNT, typ: 'at+jwt' });
  return payload as Record<string, unknown>;
}

async function guardedRoute(mounted: MountedHost, token: string): Promise<{ status: number; claims?: Record<string, unknown> }> {
  const response = await fetch(`${mounted.url}/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/brand/tokens`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return response.status === 200
    ? { status: 200, claims: ((await response.json()) as { claims: Record<string, unknown> }).claims }
    : { status: response.status };
}

describe.each(HOSTS)('openid-client 6 genericGrantRequest on $name', (host) => {
  it('JWT bearer, token exchange of an id_token, then a bot delegation: guard and jose accept all three', async () => {
    const service = sentinel();
    const mounted = await host.mount(service);
    open.push(mounted);
    const config = await client.discovery(new URL(ACCOUNT_ISSUER), BOT_CLIENT_ID, CLIENT_SECRET, client.ClientSecretPost(CLIENT_SECRET), {
      execute: [client.allowInsecureRequests],
      [client.customFetch]: via(mounted.url) as never,
    });
    expect(config.serverMetadata().grant_types_supported).toEqual(expect.arrayContaining([TOKEN_EXCHANGE, JWT_BEARER]));

    const bearer = await client.genericGrantRequest(config, JWT_BEARER, { assertion: await brandJWT(key) });
    expect(bearer.token_type).toBe('bearer');
    expect(await verifiedOutside(mounted, bearer.access_token)).toMatchObject({ sub: CONSUMER_UUID, client_id: BOT_CLIENT_ID });
    expect(await guardedRoute(mounted, bearer.access_token)).toMatchObject({ status: 200, claims: { sub: CONSUMER_UUID } });

    const exchanged = await client.genericGrantRequest(config, TOKEN_EXCHANGE, {
      subject_token: await brandJWT(key),
      subject_token_type: TYPE.idToken,
    });
    expect(exchanged.issued_token_type).toBe(TYPE.accessToken);
    expect((await guardedRoute(mounted, exchanged.access_token)).status).toBe(200);

    const delegated = await client.genericGrantRequest(config, TOKEN_EXCHANGE, {
      subject_token: exchanged.access_token,
      subject_token_type: TYPE.accessToken,
      scope: 'read',
    });
    expect(delegated.scope).toBe('read');
    expect(await verifiedOutside(mounted, delegated.access_token)).toMatchObject({ sub: CONSUMER_UUID, act: { sub: BOT_CLIENT_ID } });
    // The host's route behind requireAccessToken sees who acts for the consumer.
    expect(await guardedRoute(mounted, delegated.access_token)).toMatchObject({
      status: 200,
      claims: { act: { sub: BOT_CLIENT_ID }, scope: 'read' },
    });

    // A refusal reaches the client as the RFC's error.
    await expect(
      client.genericGrantRequest(config, JWT_BEARER, { assertion: await brandJWT(key, { aud: 'elsewhere' }) }),
    ).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });
});

describe.each(HOSTS)('oauth4webapi genericTokenEndpointRequest on $name', (host) => {
  it('JWT bearer and token exchange of a jwt, processed as a generic grant response', async () => {
    const service = sentinel();
    const mounted = await host.mount(service);
    open.push(mounted);
    const options = { [oauth.allowInsecureRequests]: true, [oauth.customFetch]: via(mounted.url) } as never;
    const as = await oauth.processDiscoveryResponse(
      new URL(ACCOUNT_ISSUER),
      await oauth.discoveryRequest(new URL(ACCOUNT_ISSUER), options),
    );
    const c: oauth.Client = { client_id: BOT_CLIENT_ID };
    const auth = oauth.ClientSecretBasic(CLIENT_SECRET);

    const bearerResponse = await oauth.genericTokenEndpointRequest(as, c, auth, JWT_BEARER, { assertion: await brandJWT(key) }, options);
    const bearer = await oauth.processGenericTokenEndpointResponse(as, c, bearerResponse);
    expect(await verifiedOutside(mounted, bearer.access_token)).toMatchObject({ sub: CONSUMER_UUID });

    const exchangeResponse = await oauth.genericTokenEndpointRequest(
      as,
      c,
      auth,
      TOKEN_EXCHANGE,
      { subject_token: await brandJWT(key), subject_token_type: TYPE.jwt },
      options,
    );
    const exchanged = await oauth.processGenericTokenEndpointResponse(as, c, exchangeResponse);
    expect(exchanged.issued_token_type).toBe(TYPE.accessToken);
    expect((await guardedRoute(mounted, exchanged.access_token)).status).toBe(200);

    const delegateResponse = await oauth.genericTokenEndpointRequest(
      as,
      c,
      auth,
      TOKEN_EXCHANGE,
      { subject_token: exchanged.access_token, subject_token_type: TYPE.accessToken },
      options,
    );
    const delegated = await oauth.processGenericTokenEndpointResponse(as, c, delegateResponse);
    expect(await guardedRoute(mounted, delegated.access_token)).toMatchObject({ status: 200, claims: { act: { sub: BOT_CLIENT_ID } } });
    expect(await verifiedOutside(mounted, delegated.access_token)).toMatchObject({ act: { sub: BOT_CLIENT_ID } });
  });
});
