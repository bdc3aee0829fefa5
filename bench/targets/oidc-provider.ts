/**
 * Peer: oidc-provider 9 issuing client-credentials JWT access tokens (resource indicators → a resource server
 * with accessTokenFormat 'jwt', ES256 with the same kind of key). Client authentication client_secret_post.
 * Mounted with its own Koa callback on node:http. Its token path is /token; the request carries `resource`.
 * It cannot bind the token to a consumer id (`state`) the way the platform does: it is the closest standard peer.
 * The variant `device` also turns on its device flow (RFC 8628) and registers the client for the grant, for the
 * device-poll row.
 */
import type { Server } from 'node:http';
import { Provider } from 'oidc-provider';
import { CLIENT_ID, CLIENT_SECRET, DEVICE_CODE_GRANT, HOST, issuerFor, privateJwkFromEnv } from '../fixtures.js';
import { resourceServer } from './oidc-provider-flow.js';
import { memoryAdapter } from './oidc-provider-memory-adapter.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen } from './util.js';

export async function start(port: number, variant?: string): Promise<RunningTarget> {
  const device = variant === 'device';
  const provider = new Provider(issuerFor(port), {
    // Its default adapter keeps 1,000 entries: the device-poll row's 20,000 codes need the unbounded one of the flow rows.
    ...(device ? { adapter: memoryAdapter() } : {}),
    jwks: { keys: [privateJwkFromEnv()] },
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: device ? ['client_credentials', DEVICE_CODE_GRANT] : ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_post',
        id_token_signed_response_alg: 'ES256',
      },
    ],
    cookies: { keys: ['bench-cookie-key-0123456789abcdef'] },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    ttl: { ClientCredentials: 3600, AccessToken: 3600 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      ...(device ? { deviceFlow: { enabled: true } } : {}),
      resourceIndicators: resourceServer('delegated.token.read.external'),
    },
  });
  const server: Server = await listen(provider.callback(), port, HOST);
  return { close: () => closeServer(server) };
}
