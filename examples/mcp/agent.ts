/**
 * The agent: the MCP SDK's client with an `OAuthClientProvider`. It finds the authorization server from the MCP
 * server's 401 (RFC 9728), names itself one of three ways (a pre-registered public app, a client ID metadata document
 * URL, or RFC 7591 registration), signs the demo user in (here without a browser: it fills the login form the way a
 * person would), and calls the tool.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/** How the agent names itself to the authorization server. */
export type ClientMode =
  | { kind: 'pre-registered'; clientId: string }
  | { kind: 'metadata-document'; url: string }
  | {
      kind: 'registration';
      initialAccessToken: string;
      /** The service's registration endpoint, the one place the token goes (not whatever endpoint discovery finds). */
      registrationEndpoint: string;
    };

/** An in-memory `OAuthClientProvider`: what a real agent keeps in its own storage. */
class AgentProvider implements OAuthClientProvider {
  #tokens: OAuthTokens | undefined;
  #verifier = '';
  #client: OAuthClientInformationMixed | undefined;
  authorizationUrl: URL | undefined;
  readonly clientMetadataUrl: string | undefined;

  constructor(
    readonly redirectUrl: string,
    mode: ClientMode,
  ) {
    if (mode.kind === 'pre-registered') this.#client = { client_id: mode.clientId };
    this.clientMetadataUrl = mode.kind === 'metadata-document' ? mode.url : undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Example MCP agent',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(client: OAuthClientInformationMixed) {
    this.#client = client;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
}

/** The cookies of one sign-in, as a browser would keep them (name=value only: one origin, no attributes needed). */
function cookieHeader(jar: Map<string, string>): string {
  return [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
}

function keepCookies(jar: Map<string, string>, response: Response): void {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';') as [string];
    const at = pair.indexOf('=');
    jar.set(pair.slice(0, at), pair.slice(at + 1));
  }
}

/** Follows the authorization URL to the login page, fills it in, and returns the code the 303 carries back. */
async function signIn(authorizationUrl: URL, user: { username: string; password: string }, redirectUrl: string): Promise<string> {
  const jar = new Map<string, string>();
  let response = await fetch(authorizationUrl, { redirect: 'manual' });
  keepCookies(jar, response);
  const loginUrl = new URL(response.headers.get('location') ?? '', authorizationUrl);
  response = await fetch(loginUrl, { headers: { cookie: cookieHeader(jar) } });
  keepCookies(jar, response);
  const page = await response.text();
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1];
  const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1]?.replace(/&amp;/g, '&');
  if (csrf === undefined || action === undefined) throw new Error('the login page has no form');
  response = await fetch(new URL(action, loginUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar), origin: loginUrl.origin },
    body: new URLSearchParams({ csrf_token: csrf, ...user }).toString(),
  });
  const back = new URL(response.headers.get('location') ?? '', loginUrl);
  if (!back.href.startsWith(redirectUrl)) throw new Error(`the sign-in ended at ${back.origin}${back.pathname}, status ${response.status}`);
  const code = back.searchParams.get('code');
  if (code === null) throw new Error(`the sign-in came back with ${back.searchParams.get('error') ?? 'no code'}`);
  return code;
}

/** What one agent run did. */
export interface AgentRun {
  /** The client id the agent ended up with: the one it registered, or its metadata document's URL. */
  clientId: string;
  /** The text of the `whoami` tool's answer. */
  toolResult: string;
  /** The access token the MCP client sent with the tool call. */
  accessToken: string;
}

/**
 * Connects to the MCP server, completes the authorization the 401 asks for, and calls `whoami`.
 * @example const run = await runAgent(new URL('http://127.0.0.1:3000/mcp'), { kind: 'registration', initialAccessToken, registrationEndpoint }, user, redirect);
 */
export async function runAgent(
  mcpUrl: URL,
  mode: ClientMode,
  user: { username: string; password: string },
  redirectUrl: string,
): Promise<AgentRun> {
  const provider = new AgentProvider(redirectUrl, mode);
  // RFC 7591 here needs the operator's initial access token: the agent sends it to that service's registration
  // endpoint only. The MCP server names the authorization server and that server its registration endpoint, so a
  // token sent to whatever endpoint discovery found would go to any host an MCP server points the agent at.
  const agentFetch: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (mode.kind !== 'registration' || url.href !== mode.registrationEndpoint) return fetch(input, init);
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${mode.initialAccessToken}`);
    return fetch(input, { ...init, headers });
  };
  const connect = async () => {
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider, fetch: agentFetch });
    const client = new Client({ name: 'example-agent', version: '1.0.0' });
    await client.connect(transport);
    return { client, transport };
  };
  let connected: Awaited<ReturnType<typeof connect>>;
  try {
    connected = await connect();
  } catch (error) {
    if (!(error instanceof UnauthorizedError) || provider.authorizationUrl === undefined) throw error;
    const code = await signIn(provider.authorizationUrl, user, redirectUrl);
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider, fetch: agentFetch });
    await transport.finishAuth(code);
    connected = await connect();
  }
  const result = await connected.client.callTool({ name: 'whoami', arguments: {} });
  await connected.client.close();
  const text = (result.content as { type: string; text: string }[])[0]?.text ?? '';
  return {
    clientId: String((await provider.clientInformation())?.client_id),
    toolResult: text,
    accessToken: provider.tokens()?.access_token ?? '',
  };
}
