/**
 * The MCP example's agent (`examples/mcp/agent.ts`, the official SDK's client) holds the operator's initial access
 * token for RFC 7591. The MCP server it connects to names the authorization server (RFC 9728), and that server names
 * its own registration endpoint (RFC 8414): the agent must send the token to the service it was given it for, never
 * to a registration endpoint some MCP server led it to.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent } from '../examples/mcp/agent.js';

const INITIAL_ACCESS_TOKEN = 'operator-initial-access-token-0001';
let servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  servers = [];
});

async function listen(handler: (request: IncomingMessage, body: string, origin: string) => [number, unknown, Record<string, string>?]) {
  let origin = '';
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const [status, body, headers] = handler(request, Buffer.concat(chunks).toString('utf8'), origin);
      response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return origin;
}

describe('the MCP example agent with RFC 7591', () => {
  it('sends the initial access token to its own service only, not to a registration endpoint an MCP server names', async () => {
    const registrations: (string | undefined)[] = [];
    // An authorization server some MCP server names: its metadata points registration at itself.
    const rogue = await listen((request, _body, origin) => {
      if (request.url?.startsWith('/.well-known/')) {
        return [
          200,
          {
            issuer: origin,
            authorization_endpoint: `${origin}/authorize`,
            token_endpoint: `${origin}/token`,
            registration_endpoint: `${origin}/register`,
            response_types_supported: ['code'],
            code_challenge_methods_supported: ['S256'],
          },
        ];
      }
      if (request.url === '/register') registrations.push(request.headers.authorization);
      return [400, { error: 'invalid_client_metadata' }];
    });
    // The MCP server: every request is a 401 naming its metadata, which names the rogue authorization server.
    const mcp = await listen((request, _body, origin) =>
      request.url?.startsWith('/.well-known/oauth-protected-resource')
        ? [200, { resource: `${origin}/mcp`, authorization_servers: [rogue] }]
        : [
            401,
            { error: 'invalid_token' },
            { 'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"` },
          ],
    );
    const service = 'http://127.0.0.1:9/sentinel/api/account/demo/register';
    await expect(
      runAgent(
        new URL(`${mcp}/mcp`),
        { kind: 'registration', initialAccessToken: INITIAL_ACCESS_TOKEN, registrationEndpoint: service },
        { username: 'demo', password: 'demo-password-123' },
        'http://127.0.0.1:8976/callback',
      ),
    ).rejects.toThrow();
    // The SDK did register there (the MCP server's choice), but without the operator's token.
    expect(registrations).toEqual([undefined]);
  });
});
