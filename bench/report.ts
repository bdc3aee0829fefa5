/**
 * Writes what `npm run bench` measured into bench/RESULTS.md: one section per group of rows (client credentials,
 * bearer guard, code flow, brand JWT exchange, agents, token use), each between `<!-- bench-<group>:start -->` and
 * `<!-- bench-<group>:end -->`, with the date, machine, versions and command, the medians of every row and the ratios
 * with their goals. A run rewrites only the groups it measured (`BENCH_ONLY='guard-*'` leaves the others as the last
 * run wrote them); the file's other sections (memory, soak, recorded findings) stay as they are.
 *
 * A ratio may compare rows of two groups (the exchange rows against the v2 client-credentials row). The other
 * group's row is then shown in the ratio's section as a reference row of the same run, and a run that measured it
 * only as that reference (all of its group it measured) does not rewrite that group's section with one row.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { isJwtBearer } from './brand-assertions.js';
import { RATIOS, type TargetSpec } from './registry.js';
import { isTokenUse } from './token-use-client.js';
import { writeResultsSection } from './results-section.js';

export interface RunSettings {
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  guardPipelining: number;
  /** Tokens per round of the token-use rows (`BENCH_TOKENS`). */
  tokensPerRound: number;
  /**
   * `BENCH_RATE`: the load generator's overall request rate, the same for every row (0: as fast as each row answers).
   * CPU per request compares rows' costs best at one rate: at saturation a slower row batches less (fewer requests
   * per event-loop turn, per pool wake-up, per writev) and pays more per request for it.
   */
  rate: number;
}

export interface RoundResult {
  requests: number;
  seconds: number;
  rps: number;
  p50ms: number;
  p99ms: number;
  cpuUsPerRequest: number;
  rssMB: number;
}

export interface RowResult {
  spec: TargetSpec;
  status: 'ok' | 'failed' | 'not available';
  reason?: string;
  check?: string;
  rounds: RoundResult[];
}

type Metric = Exclude<keyof RoundResult, 'requests' | 'seconds'>;
type Group = 'client-credentials' | 'guard' | 'code-flow' | 'exchange' | 'agents' | 'token-use';

const GROUPS: Record<Group, { title: string; method: string }> = {
  'client-credentials': {
    title: 'Client credentials: sentinel-idp against hand-written endpoints and peers',
    method:
      'Workload: `POST /sentinel/api/v2/account/123456/app/token?state=<consumer uuid>` with a form body `grant_type=client_credentials&client_id=…&client_secret=…`, answered by an ES256 `at+jwt` bound to the consumer; the same key signs everywhere. The HTTP ceiling is bare node:http answering a token signed once at startup. The hand-written baselines (bench/targets/handwritten.ts) make the same checks and claims with jose `SignJWT`. oidc-provider issues a JWT access token for one resource server (it has no consumer binding, so it does somewhat less); @node-oauth/oauth2-server runs in Express with an in-memory model signing the same JWT. The sentinel-idp rows mount the same app through each adapter, or call `sentinel.handle` from bare node:http. Goals: the Fastify adapter at least matches the hand-written Fastify + jose endpoint by req/s and CPU, doubles oidc-provider, and the Express adapter keeps 90 % of hand-written Express; an OpenTelemetry SDK sampling every trace keeps 90 % of the throughput.',
  },
  guard: {
    title: 'Bearer guard',
    method:
      '`GET /api/account/123456/consumer/{consumer}/tokens` with `Authorization: Bearer <ES256 at+jwt>`; every guard checks the signature, `typ` where it can, issuer, audience, expiry, and that the path\'s consumer is the token\'s `sub`. Before each round the runner checks 200 with the consumer, and 401 for an altered signature and for another consumer. "one token": the same token on every request; "20,000 tokens": 20,000 consumers in turn, each token presented once before the warm-up (a pass of 20,000 requests outside the window, for every row alike), so the window measures a resource server whose 20,000 tokens are all in use and a verified-token cache (sentinel-idp, @fastify/jwt) can hold them; what a first sighting costs is in the findings. Every guard row is pipelined (depth below): a guard answers in tens of µs of CPU, about what autocannon spends per request, so without pipelining every guard ends near the generator\'s rate. CPU µs per request is the figure that does not depend on the generator. Goals: every adapter\'s guard (Fastify, Express, Koa, fetch) at least 1.2× the req/s of the hand-written jose guard in its own framework with 20,000 tokens; the Fastify guard also twice with one token, at most half its CPU per request.',
  },
  'code-flow': {
    title: 'Code flow: sentinel-idp against oidc-provider',
    method:
      'Both servers get the same authorization request (PKCE S256, `scope=openid offline_access api:read`, state, nonce) from a session made through each one\'s own sign-in, and issue ES256 JWT access tokens, ES256 ID tokens and a refresh token rotated on every use. "authorize": GET with the session cookie → the redirect with a new code. "exchange": every request redeems a fresh code minted before the window, 16 through each of as many new users\' sessions, in turn (consecutive requests are different users\'). "refresh": chains, each request presenting the refresh token the previous answer returned. The runner verifies the first answers (code and state; both JWTs\' signatures and claims; the rotated-away refresh token refused). oidc-provider runs on an unbounded in-memory adapter and on the ioredis `Adapter` of its documentation; sentinel-idp on MemoryStore and RedisStore; both on the Redis at `REDIS_URL`, both ioredis clients auto-pipelining. Goals: four times oidc-provider\'s req/s on authorize, three times on exchange and refresh.',
  },
  exchange: {
    title: 'Brand JWT exchange (RFC 7523 JWT bearer): sentinel-idp against the v2 token and a hand-written endpoint',
    method:
      "Workload: `POST /sentinel/api/account/123456/token` with `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`, client_secret_post and an `assertion`: a JWT the brand's identity provider signed about the bench consumer (`iss` the brand, `sub` the consumer, `aud` the client, an hour's life, its own `jti`, one per request, minted before the rounds by bench/brand-assertions.ts), answered by the same ES256 `at+jwt` as the v2 row (checked on the first answer). The brand signs with RS256 in the headline rows (`exchange-*`) because that is what brands' identity providers sign with by default (Auth0, Okta, Microsoft Entra ID, Google), and with ES256 in the `exchange-es256-*` rows. The algorithm matters: verifying an RS256 signature (2048-bit key) costs about a third of an ES256 one (24 against 74 µs of CPU with node:crypto on this machine). Both keys are in the brand's one key set and each JWT's `kid` picks its key; each hand-written row (bench/targets/handwritten-exchange.ts: jose `jwtVerify` and `SignJWT`, the same checks, a `jti` map) accepts only its pair's algorithm, so both rows of a pair verify the same signature. The v2 client-credentials row (`sentinel-fastify`, the app's word for the consumer, no verification) runs in the same run as the reference of the first goal. Goals (issue 32): the exchange costs at most 1.5× the v2 row's CPU per request, and answers at least as many requests per second as the hand-written endpoint.",
  },
  agents: {
    title: 'MCP agents and devices: sentinel-idp against oidc-provider',
    method:
      "Resource-bound client credentials: `POST /sentinel/api/account/123456/token` (oidc-provider: `/token`) with `grant_type=client_credentials&resource=https://mcp.bench.example/mcp` and client_secret_post; both answer an ES256 `at+jwt` whose `aud` is the resource, checked on the first answer. Device-code poll: before each round the runner asks each server for 20,000 device codes (`/device_authorization`, oidc-provider `/device/auth`, outside the window), then polls them in turn with `grant_type=urn:ietf:params:oauth:grant-type:device_code`, each code coming round again only after the interval, so every answer is `400 authorization_pending` (checked on the first). sentinel-idp notes each poll's time in its store (a compare-and-set: the `slow_down` of RFC 8628 §3.5 needs it) with the interval at 1 s; oidc-provider 9 does not answer `slow_down` and only reads its record. No goals: the rows say where each stands.",
  },
  'token-use': {
    title: 'UserInfo, introspection and delegation: sentinel-idp against oidc-provider and a hand-written endpoint',
    method:
      "Before each round the runner obtains {tokens} tokens from the freshly started server through its own endpoints (bench/token-pools.ts, outside the window) and every request presents the next one in turn. UserInfo: `GET /sentinel/api/account/123456/userinfo` (oidc-provider: `/me`) with `Authorization: Bearer` and an access token of the server's own code flow (sign-in, authorize with PKCE, code exchange; `scope=openid offline_access …`); the first answer must be 200 with `sub` the user, an altered token 401 `invalid_token`. Introspection (RFC 7662): `POST …/token/introspect` (oidc-provider: `/token/introspection`) with the same kind of token, `token_type_hint=access_token` and client_secret_post; the first answer must be `active: true` with the client, the user, `exp` and `openid` in `scope`, an altered token `{\"active\":false}`. sentinel-idp's access tokens are ES256 JWTs: it checks the signature (its verified-token cache answers for a token seen before, so from the second pass over the pool), the account and whether the grant still stands; oidc-provider serves UserInfo and introspects only its opaque access tokens (a JWT access token is for a resource server), so its row runs the variant `oidc-provider-flow:opaque` and looks each token up in its in-memory adapter, and a client introspects only its own tokens in both. Delegation (RFC 8693): `POST /sentinel/api/account/123456/token` with `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`, `subject_token` = a consumer-bound token of the server's v2 endpoint, `subject_token_type=…:access_token`, as a bot app (client_secret_post) → an ES256 `at+jwt` with `act: {sub: <bot>}`, `sub` the consumer, the subject's `aud` and `iss`, `exp` no later than the subject's (checked on the first answer; an altered subject token 400 `invalid_request`). oidc-provider has no token exchange: the peer is bench/targets/handwritten-delegation.ts, Fastify + jose making the same checks (client, subject token's signature, `typ`, issuer, account, expiry, not an app token, no `cnf`, chain depth, scope) and signing the token with `act`, verifying every subject token afresh (no cache). No goals: the rows say where each stands.",
  },
};

const PACKAGES = [
  'fastify',
  'express',
  'koa',
  'jose',
  'oidc-provider',
  '@node-oauth/oauth2-server',
  '@fastify/jwt',
  'express-oauth2-jwt-bearer',
  'autocannon',
];

function groupOf(spec: TargetSpec): Group {
  if (spec.workload.startsWith('guard')) return 'guard';
  if (isJwtBearer(spec.workload)) return 'exchange';
  if (['rcc', 'oidc-rcc', 'device-poll', 'oidc-device-poll'].includes(spec.workload)) return 'agents';
  if (isTokenUse(spec.workload)) return 'token-use';
  return spec.workload === 'cc' || spec.workload === 'oidc-cc' ? 'client-credentials' : 'code-flow';
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const medianOf = (row: RowResult, metric: Metric): number => median(row.rounds.map((r) => r[metric]));
const fmt = (value: number, digits = 0): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');

function version(pkg: string): string {
  try {
    const file = fileURLToPath(new URL(pkg === '.' ? '../package.json' : `../node_modules/${pkg}/package.json`, import.meta.url));
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

function ratioLines(rows: RowResult[], group: Group): string[] {
  const byName = new Map(rows.map((r) => [r.spec.name, r]));
  const lines: string[] = [];
  for (const ratio of RATIOS) {
    const [a, b] = [byName.get(ratio.numerator), byName.get(ratio.denominator)];
    if (a === undefined || groupOf(a.spec) !== group) continue;
    const ok = [a, b].every((r) => r?.status === 'ok' && r.rounds.length > 0);
    const metric: Metric = ratio.metric === 'rps' ? 'rps' : 'cpuUsPerRequest';
    const value = ok ? medianOf(a, metric) / medianOf(b as RowResult, metric) : Number.NaN;
    const goal = ratio.target === undefined ? '' : `${ratio.metric === 'rps' ? '≥' : '≤'} ${Number(ratio.target.toFixed(2))}×`;
    const met = ratio.metric === 'rps' ? value >= (ratio.target ?? 0) : value <= (ratio.target ?? 0);
    const verdict = !ok ? `no result for ${ratio.denominator}` : ratio.target === undefined ? '' : met ? 'met' : '**not met**';
    lines.push(`| ${ratio.label} | ${ok ? `${value.toFixed(2)}×` : '–'} | ${goal} | ${verdict} |`);
  }
  return lines.length === 0 ? [] : ['', '| ratio (req/s unless CPU) | value | goal | |', '|---|---:|---:|---|', ...lines];
}

function section(group: Group, rows: RowResult[], settings: RunSettings, startedAt: Date): string {
  const cpus = os.cpus();
  const pipelined = group === 'guard' ? `, pipelined ${settings.guardPipelining} deep` : '';
  const paced = settings.rate > 0 ? `, paced at ${settings.rate} req/s overall (\`BENCH_RATE\`)` : '';
  const short = settings.rounds < 3 || settings.durationSeconds < 5 ? ' **A short run: noisy, not for quoting.**' : '';
  const lines = [
    `<!-- bench-${group}:start -->`,
    `## ${GROUPS[group].title}`,
    '',
    `Written by \`npm run bench\` (bench/run.ts) on ${startedAt.toISOString().slice(0, 16)}Z: ${settings.rounds} round(s) × ${settings.durationSeconds} s after ${settings.warmupSeconds} s of warm-up, ${settings.connections} connections${pipelined}${paced}, autocannon in the parent process; ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'} shared by the servers and the load generator, ${os.type()} ${os.release()}, load average at the end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(
        ' ',
      )}; Node.js ${process.version}, sentinel-idp ${version('.')} built as published, ${PACKAGES.map((p) => `${p} ${version(p)}`).join(', ')}.${short}`,
    '',
    GROUPS[group].method.replace('{tokens}', settings.tokensPerRound.toLocaleString('en-US')),
    '',
    "Every target runs alone in a child process; each round starts it fresh, checks its first answer, warms it up and measures; the order rotates by round. A response with any other status, an error or a timeout fails the row. req/s = responses ÷ window; CPU µs/req = the server process's user + system CPU over the window (every thread) ÷ responses; RSS after the window. Medians over rounds; ratios of medians within this run.",
    '',
    '| target | req/s | p99 ms | CPU µs/req | RSS MB | status (req/s per round) |',
    '|---|---:|---:|---:|---:|---|',
  ];
  for (const row of rows) {
    const ok = row.status === 'ok' && row.rounds.length > 0;
    const cell = (metric: Metric, digits = 0): string => (ok ? fmt(medianOf(row, metric), digits) : '–');
    const status = row.status === 'ok' ? `ok (${row.rounds.map((r) => fmt(r.rps)).join(', ')})` : `**${row.status}**: ${row.reason ?? ''}`;
    lines.push(
      `| ${row.spec.label} \`${row.spec.name}\`${groupOf(row.spec) === group ? '' : ' (reference, same run)'} | ${cell('rps')} | ${cell('p99ms', 1)} | ${cell('cpuUsPerRequest')} | ${cell('rssMB')} | ${status.replace(/\|/g, '\\|')} |`,
    );
  }
  lines.push(...ratioLines(rows, group), `<!-- bench-${group}:end -->`);
  return lines.join('\n');
}

/** The rows of other groups that `group`'s ratios compare with, among those measured: shown in its section too. */
function referenceRows(group: Group, rows: RowResult[]): RowResult[] {
  const byName = new Map(rows.map((r) => [r.spec.name, r]));
  const names = RATIOS.filter((ratio) => {
    const numerator = byName.get(ratio.numerator);
    return numerator !== undefined && groupOf(numerator.spec) === group;
  }).map((ratio) => ratio.denominator);
  return [...new Set(names)].flatMap((name) => {
    const row = byName.get(name);
    return row !== undefined && groupOf(row.spec) !== group ? [row] : [];
  });
}

/** Rewrites the section of every group the run measured in `out`; returns the groups written. */
export function writeReport(out: string, rows: RowResult[], settings: RunSettings, startedAt: Date): Group[] {
  const groups = [...new Set(rows.map((r) => groupOf(r.spec)))];
  const references = new Map(groups.map((group) => [group, referenceRows(group, rows)]));
  const referenced = new Set([...references.values()].flat());
  const written: Group[] = [];
  for (const group of groups) {
    const members = rows.filter((r) => groupOf(r.spec) === group);
    // Measured only as another section's reference: this group's section keeps its last full figures.
    if (members.every((row) => referenced.has(row))) continue;
    const shown = [...members, ...(references.get(group) ?? [])];
    writeResultsSection(out, `bench-${group}`, section(group, shown, settings, startedAt));
    written.push(group);
  }
  return written;
}
