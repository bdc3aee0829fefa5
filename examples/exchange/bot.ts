/**
 * The clients' side, with nothing but `fetch`: the messaging app trades the brand's JWT for the consumer-bound token
 * (RFC 7523 JWT bearer), and a bot trades that token for one that lets it act for the consumer (RFC 8693 token
 * exchange), narrower than the consumer's. Both authenticate with their client secret (HTTP Basic).
 */

/** A registered client of the account. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** What the token endpoint answered. */
export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
}

async function tokenRequest(tokenEndpoint: string, client: ClientCredentials, fields: Record<string, string>): Promise<TokenAnswer> {
  const basic = Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64');
  const response = await fetch(tokenEndpoint, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/**
 * The consumer-bound token for the consumer the brand's JWT names (RFC 7523 §2.1).
 * @example const { body } = await proveConsumer(tokenEndpoint, app, await brand.signConsumerJWT(consumerId, issuer));
 */
export function proveConsumer(tokenEndpoint: string, app: ClientCredentials, brandJWT: string): Promise<TokenAnswer> {
  return tokenRequest(tokenEndpoint, app, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: brandJWT });
}

/**
 * A token that lets `bot` act for the subject of `subjectToken`, with `scope` at most the subject's (RFC 8693 §4.1).
 * @example const { body } = await actFor(tokenEndpoint, bot, consumerToken, 'messages:write');
 */
export function actFor(tokenEndpoint: string, bot: ClientCredentials, subjectToken: string, scope: string): Promise<TokenAnswer> {
  return tokenRequest(tokenEndpoint, bot, {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: subjectToken,
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    scope,
  });
}
