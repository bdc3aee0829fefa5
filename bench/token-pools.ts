/**
 * The token-use rows' preparation (UserInfo, introspection, delegation): before the window of a round, the runner
 * obtains from the freshly started server the tokens the window presents, each server through its own endpoints, so
 * that the window measures the use of a token only. UserInfo and introspection take the access tokens of the code
 * flow (sign-in, authorize, code exchange with PKCE: bench/flow-client.ts); delegation takes consumer-bound tokens
 * of the v2 endpoint, which sentinel-idp and the hand-written endpoint both serve.
 */
import autocannon from 'autocannon';
import { CC_BODY, CONSUMER_ID, FORM_CONTENT_TYPE, HOST, TOKEN_PATH, TOKENS_PER_ROUND } from './fixtures.js';
import type { LoadSettings } from './client.js';
import { FlowLoad } from './flow-client.js';
import type { TokenPool, TokenUseWorkload } from './token-use-client.js';

/** Obtains `count` tokens for `workload` from the server on `port`; anything short of that fails the row. */
export async function prepareTokenPool(
  workload: TokenUseWorkload,
  port: number,
  load: LoadSettings,
  count = TOKENS_PER_ROUND,
): Promise<TokenPool> {
  if (workload === 'delegation') return { tokens: await consumerTokens(port, load, count), next: 0 };
  const flow = new FlowLoad(workload.startsWith('oidc-') ? 'oidc-exchange' : 'exchange', port, load);
  return { tokens: await flow.accessTokens(count), next: 0 };
}

/** `count` consumer-bound tokens of the bench consumer from the v2 client-credentials endpoint. */
async function consumerTokens(port: number, load: LoadSettings, count: number): Promise<string[]> {
  const tokens: string[] = [];
  const result = await autocannon({
    url: `http://${HOST}:${port}`,
    connections: Math.min(load.connections, count),
    pipelining: 1,
    timeout: load.timeoutSeconds,
    amount: count,
    requests: [
      {
        method: 'POST',
        path: `${TOKEN_PATH}?state=${CONSUMER_ID}`,
        headers: { 'content-type': FORM_CONTENT_TYPE },
        body: CC_BODY,
        onResponse: (status, body) => {
          const token = status === 200 ? (JSON.parse(String(body)) as { access_token?: unknown }).access_token : undefined;
          if (typeof token === 'string') tokens.push(token);
        },
      },
    ],
  });
  if (result.errors > 0 || result.timeouts > 0 || tokens.length < count) {
    throw new Error(`consumer tokens: ${tokens.length} of ${count} (${result.errors} errors, ${result.timeouts} timeouts)`);
  }
  return tokens;
}
