/**
 * Peer for the code-flow rows: oidc-provider 9 doing the same work as sentinel-idp — authorization code with PKCE
 * (S256, required), an ES256 ID token, refresh tokens rotated on every use, and ES256 JWT access tokens (`at+jwt`)
 * for a resource server (resource indicators; oidc-provider issues JWT access tokens only for a resource). Client
 * authentication client_secret_post. An unbounded in-memory adapter (oidc-provider-memory-adapter.ts), or with the
 * variant `redis` the ioredis `Adapter` of oidc-provider's documentation (oidc-provider-redis-adapter.ts).
 *
 * Sign-in and consent are completed by a route of this server (`/interaction/{uid}`) that signs the bench user in
 * and grants the requested scopes, so the runner gets a session cookie the way a browser would; the measured
 * authorize requests then find a session and an existing grant and answer 302 with a code, as sentinel-idp does.
 *
 * The variant `opaque` serves the UserInfo and introspection rows: no resource is granted or defaulted, so the code
 * flow's access token is oidc-provider's opaque token for its UserInfo endpoint (it serves UserInfo and introspects
 * only opaque tokens: a JWT access token is for a resource server), and introspection is on, a client seeing only
 * its own tokens as sentinel-idp's does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Provider } from 'oidc-provider';
import {
  AGENT_RESOURCE,
  CLIENT_ID,
  CLIENT_SECRET,
  HOST,
  issuerFor,
  OIDC_RESOURCE,
  privateJwkFromEnv,
  redirectUriFor,
  USER_ID,
} from '../fixtures.js';
import { memoryAdapter } from './oidc-provider-memory-adapter.js';
import { redisAdapter } from './oidc-provider-redis-adapter.js';
import { benchRedis } from './redis-bench.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen } from './util.js';

/** The resource server's scope the bench grants (requested as `scope`, like every resource scope). */
export const OIDC_API_SCOPE = 'api:read';

export async function start(port: number, variant?: string): Promise<RunningTarget> {
  if (variant === 'opaque') return startFlowProvider(port, memoryAdapter(), undefined, true);
  if (variant !== 'redis') return startFlowProvider(port, memoryAdapter());
  // Auto-pipelining as sentinel-idp's recommended client options have it: both rows get the same client setting,
  // so the ratio compares how the two servers use Redis, not how their clients are configured.
  const redis = benchRedis('oidc', { maxRetriesPerRequest: 1, enableAutoPipelining: true });
  return startFlowProvider(port, redisAdapter(redis.client, redis.prefix), redis.close);
}

/**
 * oidc-provider's resource-indicators feature with one resource server that takes ES256 JWT access tokens (it
 * issues JWT access tokens only for a resource); shared with the client-credentials peer (oidc-provider.ts).
 */
export function resourceServer(scope: string) {
  return {
    enabled: true,
    defaultResource: async () => OIDC_RESOURCE,
    useGrantedResource: async () => true,
    getResourceServerInfo: async (_ctx: unknown, resourceIndicator: string) => {
      // The platform API of the older rows, and the MCP server of the resource-bound rows (bench/registry.ts).
      if (resourceIndicator !== OIDC_RESOURCE && resourceIndicator !== AGENT_RESOURCE)
        throw new Error(`unknown resource ${resourceIndicator}`);
      return { scope, audience: resourceIndicator, accessTokenTTL: 3600, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } };
    },
  };
}

/** A client introspects only the tokens issued to it (what sentinel-idp does; oidc-provider's default is wider). */
async function ownTokensOnly(
  ctx: { oidc: { client?: { clientId: string } } },
  _client: unknown,
  token: { clientId?: string },
): Promise<boolean> {
  return token.clientId === ctx.oidc.client?.clientId;
}

/**
 * Starts the provider with `adapter` (the class oidc-provider instantiates per model); `opaque`: access tokens for
 * UserInfo, introspection on (the variant `opaque`).
 */
async function startFlowProvider(port: number, adapter: unknown, onClose?: () => Promise<void>, opaque = false): Promise<RunningTarget> {
  const provider = new Provider(issuerFor(port), {
    adapter,
    jwks: { keys: [privateJwkFromEnv()] },
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [redirectUriFor(port)],
        token_endpoint_auth_method: 'client_secret_post',
        id_token_signed_response_alg: 'ES256',
      },
    ],
    cookies: { keys: ['bench-cookie-key-0123456789abcdef'] },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    pkce: { required: () => true },
    // sentinel-idp issues a refresh token to every app registered for the grant and rotates it on every use.
    issueRefreshToken: async () => true,
    rotateRefreshToken: true,
    // Short lives keep a shared Redis tidy should a server die before its keys are deleted; per-request work is the same.
    ttl: { AccessToken: 3600, AuthorizationCode: 60, IdToken: 3600, RefreshToken: 3600, Grant: 3600, Session: 3600 },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: opaque
        ? { enabled: true, defaultResource: async () => undefined, useGrantedResource: async () => false }
        : resourceServer(OIDC_API_SCOPE),
      ...(opaque ? { introspection: { enabled: true, allowedPolicy: ownTokensOnly } } : {}),
    },
  });
  const providerCallback = provider.callback();

  // Sign-in, then consent: each prompt comes back here once and is completed at once.
  async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      await provider.interactionFinished(req, res, { login: { accountId: USER_ID } }, { mergeWithLastSubmission: false });
      return;
    }
    const existing = details.grantId === undefined ? undefined : await provider.Grant.find(details.grantId);
    const grant = existing ?? new provider.Grant({ accountId: details.session?.accountId ?? USER_ID, clientId: details.params.client_id });
    grant.addOIDCScope('openid offline_access');
    if (!opaque) grant.addResourceScope(OIDC_RESOURCE, OIDC_API_SCOPE);
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  const server = await listen(
    (req, res) => {
      if (req.url?.startsWith('/interaction/')) {
        interaction(req, res).catch((err: unknown) => {
          res.statusCode = 500;
          res.end(err instanceof Error ? err.message : String(err));
        });
        return;
      }
      providerCallback(req, res);
    },
    port,
    HOST,
  );
  return {
    close: async () => {
      await closeServer(server);
      await onClose?.();
    },
  };
}
