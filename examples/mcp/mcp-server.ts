/**
 * The MCP server of the example: one tool (`whoami`), served statelessly (a fresh server and transport per request,
 * as the SDK's stateless mode asks), behind the service's guard. Node hosts use the SDK's Node transport; the fetch
 * host its web-standard one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { AccessTokenClaims } from '../../src/index.js';

/** The MCP server for one request, its tool answering with what the verified token says. */
function mcpServer(claims: AccessTokenClaims): McpServer {
  const server = new McpServer({ name: 'sentinel-mcp-example', version: '1.0.0' });
  server.registerTool('whoami', { description: 'Who the token was issued to, and for which resource' }, async () => ({
    content: [{ type: 'text', text: JSON.stringify({ user: claims.sub, client: claims.client_id, audience: claims.aud }) }],
  }));
  return server;
}

/** Answers one MCP request on a Node host (Express, Koa, Fastify), the token already verified. */
export async function handleNodeMcp(
  claims: AccessTokenClaims,
  request: IncomingMessage,
  response: ServerResponse,
  body?: unknown,
): Promise<void> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  const server = mcpServer(claims);
  response.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request, response, body);
}

/** Answers one MCP request in a fetch runtime, the token already verified. */
export async function handleFetchMcp(claims: AccessTokenClaims, request: Request): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const server = mcpServer(claims);
  await server.connect(transport);
  return transport.handleRequest(request);
}
