/**
 * What the demo application asks of the service and of the platform's API, over HTTP as any other application
 * would: the token endpoint (code exchange, RFC 6749 §4.1.3; refresh, §6), revocation (RFC 7009), introspection
 * (RFC 7662), the v2 consumer-bound app token, and the guarded brand-tokens API (RFC 6750 bearer). The app is a
 * confidential client and authenticates with HTTP Basic (RFC 6749 §2.3.1).
 */

/** Where the calls go and who makes them. */
export interface ServiceCallOptions {
  /** Where this process reaches the service (the back channel); read at each call. */
  internalURL: string;
  accountId: string;
  clientId: string;
  clientSecret: string;
}

/** A JSON answer with its status and the `WWW-Authenticate` header, when any. */
export interface Answer {
  status: number;
  body: Record<string, unknown>;
  challenge: string | null;
}

/** The calls. */
export interface ServiceCalls {
  token(form: Record<string, string>): Promise<Answer>;
  revoke(token: string, hint: 'refresh_token' | 'access_token'): Promise<Answer>;
  introspect(token: string): Promise<Answer>;
  appToken(consumerId: string): Promise<Answer>;
  brandTokens(consumerId: string, token: string): Promise<Answer>;
}

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = text === '' ? {} : JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null) body = parsed as Record<string, unknown>;
  } catch {
    body = { text: text.slice(0, 200) };
  }
  return { status: response.status, body, challenge: response.headers.get('www-authenticate') };
}

/**
 * Creates the calls.
 * @example const answer = await createServiceCalls(options, { basePath, accountPath }).token({ grant_type: 'refresh_token', refresh_token });
 */
export function createServiceCalls(options: ServiceCallOptions, paths: { basePath: string; accountPath: string }): ServiceCalls {
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`).toString('base64')}`;
  const post = async (path: string, form: Record<string, string>): Promise<Answer> =>
    answerOf(
      await fetch(`${options.internalURL}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8', authorization: basic },
        body: new URLSearchParams(form),
      }),
    );
  return {
    token: (form) => post(`${paths.accountPath}/token`, form),
    revoke: (token, hint) => post(`${paths.accountPath}/token/revoke`, { token, token_type_hint: hint }),
    introspect: (token) => post(`${paths.accountPath}/token/introspect`, { token }),
    appToken: (consumerId) =>
      post(`${paths.basePath}/api/v2/account/${encodeURIComponent(options.accountId)}/app/token?state=${encodeURIComponent(consumerId)}`, {
        grant_type: 'client_credentials',
      }),
    brandTokens: async (consumerId, token) =>
      answerOf(
        await fetch(
          `${options.internalURL}/api/account/${encodeURIComponent(options.accountId)}/consumer/${encodeURIComponent(consumerId)}/brand/tokens`,
          { headers: { authorization: `Bearer ${token}` } },
        ),
      ),
  };
}
