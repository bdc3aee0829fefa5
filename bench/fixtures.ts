/**
 * Shared fixtures of the benchmark: one account, one application, one consumer, one ES256 signing key.
 *
 * The runner generates the key pair once per run and hands the private JWK to every server child through the
 * BENCH_PRIVATE_JWK environment variable, so every target signs with the same kind of key and the runner can
 * verify every target's tokens with one public key.
 */
import { createHash } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';

export const HOST = '127.0.0.1';
export const ACCOUNT_ID = '123456';
export const CLIENT_ID = '6f1c2a9e-3b7d-4c1e-9a2f-5d8e7b6c4a31';
/** 26 chars of [a-z0-9], the platform's secret shape. */
export const CLIENT_SECRET = 'k3v9x0q2m8t1w7z4p6r5n0b2c1';
export const CLIENT_SECRET_SHA256 = createHash('sha256').update(CLIENT_SECRET).digest();
export const CONSUMER_ID = '0b9e7a52-8d7c-4f4e-b1a3-2c6d9e8f7a10';
export const KID = 'bench-es256-1';
/** The resource indicator used for oidc-provider (it issues JWT access tokens only for a resource server). */
export const OIDC_RESOURCE = 'urn:bench:platform-api';
/** The resource (an MCP server) of the resource-bound rows, an RFC 8707 https URI both servers accept. */
export const AGENT_RESOURCE = 'https://mcp.bench.example/mcp';
/**
 * Device codes per round of a device-poll row, polled in turn. The pool is large enough that a code comes round again
 * only after the 1-second interval of the bench's sentinel-idp (up to 20,000 polls/s), so every poll is a fresh
 * `authorization_pending` and none a `slow_down`.
 */
export const DEVICE_CODES_PER_ROUND = 20_000;
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** PKCE verifier used by the authorize/exchange workloads (one for all codes: the server only compares). */
export const CODE_VERIFIER = 'bench-code-verifier-0123456789-abcdefghijklmnopqrstuvwxyz';
export const USERNAME = 'bench-user';
/** The bench user's id, which every server's sign-in gives the user (`sub` of its tokens and of UserInfo). */
export const USER_ID = 'u-1';
export const PASSWORD = 'bench-password';

export const TOKEN_PATH = `/sentinel/api/v2/account/${ACCOUNT_ID}/app/token`;
export const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded;charset=UTF-8';
export const CC_BODY = new URLSearchParams({
  grant_type: 'client_credentials',
  client_id: CLIENT_ID,
  client_secret: CLIENT_SECRET,
}).toString();

/**
 * How long the bench clients wait for one answer outside the load windows (sign-in, first-answer checks, minting
 * codes): 10 s, or `BENCH_CHECK_TIMEOUT_S`. bench/instructions.ts raises it, because under valgrind on a loaded host
 * the first requests of a path, translated afresh, take longer.
 */
export function checkTimeout(): AbortSignal {
  return AbortSignal.timeout(Number(process.env.BENCH_CHECK_TIMEOUT_S ?? 10) * 1000);
}

export function issuerFor(port: number): string {
  return `http://${HOST}:${port}`;
}

export function redirectUriFor(port: number): string {
  return `http://${HOST}:${port}/cb`;
}

/** Creates the run's ES256 key pair as JWKs (private one carries kid, alg, use). */
export async function createKeyPair(): Promise<{ privateJwk: JWK; publicJwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid: KID, alg: 'ES256', use: 'sig' };
  const publicJwk = { ...(await exportJWK(publicKey)), kid: KID, alg: 'ES256', use: 'sig' };
  return { privateJwk, publicJwk };
}

/** The private JWK of this run, as handed over by the runner. */
export function privateJwkFromEnv(): JWK {
  const raw = process.env.BENCH_PRIVATE_JWK;
  if (!raw) throw new Error('BENCH_PRIVATE_JWK is not set (start targets through bench/server.ts)');
  return JSON.parse(raw) as JWK;
}

/**
 * The guard rows verify tokens minted once by the runner, so their issuer cannot depend on the child's port: every
 * guard target (sentinel-idp and the peers) is configured with this issuer base.
 */
export const GUARD_ISSUER_BASE = 'https://idp.bench.example';
export const GUARD_ISSUER = `${GUARD_ISSUER_BASE}/sentinel/api/account/${ACCOUNT_ID}`;

/** The protected route of the guard rows; the consumer in the path must be the token's `sub`. */
export function guardPath(consumerId: string): string {
  return `/api/account/${ACCOUNT_ID}/consumer/${consumerId}/tokens`;
}

// The brand JWT exchange rows (RFC 7523 JWT bearer): a brand identity provider the account trusts signs one JWT per
// request about the bench consumer; the runner mints them (bench/brand-assertions.ts) with keys of its own.

/** The brand's `iss`; its public keys reach the targets as BENCH_BRAND_JWKS. */
export const BRAND_ISSUER = 'https://id.brand.bench.example';
/** The account token endpoint, where both exchange grants are. */
export const ACCOUNT_TOKEN_PATH = `/sentinel/api/account/${ACCOUNT_ID}/token`;
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** The brand's public JWKs of this run (one per algorithm), as handed over by the runner; `undefined` when no exchange row runs. */
export function brandPublicJwksFromEnv(): JWK[] | undefined {
  const raw = process.env.BENCH_BRAND_JWKS;
  return raw ? (JSON.parse(raw) as JWK[]) : undefined;
}

// The delegation rows (RFC 8693 token exchange): a bot app of the account exchanges a consumer-bound access token
// the server issued for a token that names the bot in `act`.

/** The bot: a second confidential app of the account, registered for token exchange; it shares the bench secret. */
export const BOT_CLIENT_ID = 'b0b0b0b0-1111-4222-8333-444444444444';
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/**
 * Distinct tokens each round of a UserInfo, introspection or delegation row presents in turn, all obtained from the
 * server before the window (bench/token-pools.ts): the code flow's access tokens, the v2 endpoint's consumer tokens.
 * The code flow's come 16 to a sign-in (a session keeps 16 grants of an app), and a thousand of them took minutes
 * per round on a loaded host: 256, sixteen sign-ins. `BENCH_TOKENS` sets another number.
 */
export const TOKENS_PER_ROUND = 256;
