/**
 * The MCP example, end to end: for each framework, the service and an MCP server on one host; for each way an agent
 * can name itself, the agent signs the demo user in and calls the tool; then the agent's token is presented to
 * another resource, whose guard refuses it. Prints one line per step. Run it with `npm run example:mcp`, which
 * starts it with a throwaway loopback certificate trusted (NODE_EXTRA_CA_CERTS): the agent's client ID metadata
 * document must be served over https, and the MCP SDK refuses any other URL.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSentinel, generatePrivateJWK } from '../../src/index.js';
import { runAgent, type ClientMode } from './agent.js';
import { FRAMEWORKS, reservePort, startHost } from './hosts.js';

const ACCOUNT = 'demo';
const USER = { username: 'demo', password: 'demo-password-123' };
const INITIAL_ACCESS_TOKEN = 'operator-initial-access-token-0001';
const PUBLIC_CLIENT = 'mcp-desktop-agent';
const REDIRECT = 'http://127.0.0.1:8976/callback';
const key = generatePrivateJWK('ES256');

/** Serves the agent's client ID metadata document over https on loopback; returns its URL. */
async function serveMetadataDocument(): Promise<{ url: string; close: () => void }> {
  const certFile = process.env.NODE_EXTRA_CA_CERTS;
  const keyFile = process.env.MCP_EXAMPLE_TLS_KEY;
  if (certFile === undefined || keyFile === undefined) throw new Error('start this with npm run example:mcp (it makes the certificate)');
  let url = '';
  const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
    response.end(
      JSON.stringify({ client_id: url, client_name: 'Example MCP agent', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/agent/client.json`;
  return { url, close: () => server.close() };
}

async function main(): Promise<void> {
  const only = process.argv[2];
  const document = await serveMetadataDocument();
  let failures = 0;
  for (const framework of FRAMEWORKS.filter((name) => only === undefined || name === only)) {
    const { server, port } = await reservePort();
    const origin = `http://127.0.0.1:${port}`;
    const resource = `${origin}/mcp`;
    const otherResource = `${origin}/billing-mcp`;
    const sentinel = createSentinel({
      issuer: origin,
      keys: [key],
      apps: [
        {
          accountId: ACCOUNT,
          clientId: PUBLIC_CLIENT,
          tokenEndpointAuthMethod: 'none',
          name: 'Desktop agent',
          redirectUris: [REDIRECT],
          resources: [resource],
        },
      ],
      users: {
        authenticate: async ({ username, password }) =>
          username === USER.username && password === USER.password ? { id: 'u-demo' } : null,
      },
      // The MCP servers that self-described (client ID metadata document) and self-registered agents may ask for.
      defaultResources: [resource, otherResource],
      clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true },
      registration: { initialAccessToken: INITIAL_ACCESS_TOKEN },
      logger: { warn: () => {} },
    });
    const host = await startHost(framework, server, sentinel, { accountId: ACCOUNT, resource, otherResource });
    const modes: [string, ClientMode][] = [
      ['pre-registered public app', { kind: 'pre-registered', clientId: PUBLIC_CLIENT }],
      ['client ID metadata document', { kind: 'metadata-document', url: document.url }],
      [
        'RFC 7591 registration',
        {
          kind: 'registration',
          initialAccessToken: INITIAL_ACCESS_TOKEN,
          registrationEndpoint: `${origin}/sentinel/api/account/${ACCOUNT}/register`,
        },
      ],
    ];
    for (const [label, mode] of modes) {
      try {
        const run = await runAgent(new URL(resource), mode, USER, REDIRECT);
        const said = JSON.parse(run.toolResult) as { user: string; client: string; audience: unknown };
        const ok = said.user === 'u-demo' && said.audience === resource;
        console.log(
          `${framework} ${label}: ${ok ? 'OK' : 'WRONG'} whoami says user ${said.user}, client ${said.client}, aud ${String(said.audience)}`,
        );
        // The same token at another resource: its guard must refuse it (the token's aud is the MCP server).
        const other = await fetch(otherResource, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${run.accessToken}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
        const challenge = other.headers.get('www-authenticate') ?? '';
        const refused = other.status === 401 && challenge.includes('error="invalid_token"') && challenge.includes('resource_metadata=');
        console.log(
          `${framework} ${label}: ${refused ? 'OK' : 'WRONG'} another resource answers ${other.status} ${challenge.split(', error_description')[0]}`,
        );
        if (!ok || !refused) failures += 1;
      } catch (error) {
        failures += 1;
        console.log(`${framework} ${label}: FAILED ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    await host.close();
  }
  document.close();
  console.log(failures === 0 ? 'mcp example: all flows completed' : `mcp example: ${failures} flow(s) failed`);
  process.exitCode = failures === 0 ? 0 : 1;
}

await main();
