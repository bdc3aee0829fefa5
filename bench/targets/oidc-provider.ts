/**
 * Peer: oidc-provider 9 issuing client-credentials JWT access tokens (resource indicators → a resource server
 * with accessTokenFormat 'jwt', ES256 with the same kind of key). Client authentication client_secret_post.
 * Mounted with its own Koa callback on node:http. Its token path is /token; the request carries `resource`.
 * It cannot bind the token to a consumer id (`state`) the way the platform does: it is the closest standard peer.
 */
import type { Server } from 'node:http';
import { Provider } from 'oidc-provider';
import { CLIENT_ID, CLIENT_SECRET, HOST, issuerFor, privateJwkFromEnv } from '../fixtures.js';
import { resourceServer } from './oidc-provider-flow.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen } from './util.js';

export async function start(port: number): Promise<RunningTarget> {
  const provider = new Provider(issuerFor(port), {
    jwks: { keys: [privateJwkFromEnv()] },
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: ['client_credentials'],
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
      resourceIndicators: resourceServer('delegated.token.read.external'),
    },
  });
  const server: Server = await listen(provider.callback(), port, HOST);
  return { close: () => closeServer(server) };
}
