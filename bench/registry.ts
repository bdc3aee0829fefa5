/**
 * The benchmark's rows. `module` is the file under bench/targets/ that bench/server.ts starts in a child process,
 * with an optional `:variant` its `start` receives; `workload` is what the load generator sends (bench/client.ts).
 */
export type Workload =
  /** POST the consumer-bound client-credentials request to /sentinel/api/v2/account/{acct}/app/token?state=… */
  | 'cc'
  /** The same grant against oidc-provider's /token with client_secret_post and a resource indicator. */
  | 'oidc-cc'
  /** GET authorize with an existing device session: 302 back to the app with a code (bench/flow-client.ts). */
  | 'authorize'
  /** POST authorization_code (+ PKCE) to /sentinel/api/account/{acct}/token, one fresh code per request: AT + RT + ID token. */
  | 'exchange'
  /** POST refresh_token, each request presenting the token the previous response of its chain returned. */
  | 'refresh'
  /** The same three against oidc-provider's /auth and /token. */
  | 'oidc-authorize'
  | 'oidc-exchange'
  | 'oidc-refresh'
  /**
   * POST the RFC 7523 JWT bearer grant to /sentinel/api/account/{acct}/token, a fresh brand JWT per request, signed
   * RS256 (the identity providers' default) or ES256 (bench/brand-assertions.ts).
   */
  | 'jwt-bearer-rs256'
  | 'jwt-bearer-es256'
  /** POST client_credentials with `resource` (RFC 8707) to the account token endpoint: a JWT whose aud is the resource. */
  | 'rcc'
  /** The same against oidc-provider's /token (client_secret_post, the same resource). */
  | 'oidc-rcc'
  /** POST the device_code grant with a pending device code (20,000 in turn): 400 authorization_pending. */
  | 'device-poll'
  /** The same against oidc-provider's /token. */
  | 'oidc-device-poll'
  /**
   * GET sentinel-idp's UserInfo (/sentinel/api/account/{acct}/userinfo) with `Authorization: Bearer`, the access
   * tokens of the server's own code flow (scope openid …) in turn (bench/token-pools.ts).
   */
  | 'userinfo'
  /** The same against oidc-provider's /me (its opaque access tokens for the UserInfo endpoint). */
  | 'oidc-userinfo'
  /** POST the same tokens to the account's introspection endpoint (RFC 7662) with client_secret_post: active. */
  | 'introspect'
  /** The same against oidc-provider's /token/introspection. */
  | 'oidc-introspect'
  /**
   * POST RFC 8693 token exchange to /sentinel/api/account/{acct}/token as the bot app: `subject_token` = a
   * consumer-bound access token the server issued (its v2 endpoint, before the window), type access_token → a token
   * with `act`. The hand-written endpoint answers the same request.
   */
  | 'delegation'
  /** GET the guarded route with one consumer-bound token, the same on every request. */
  | 'guard-one'
  /** GET the guarded route cycling through 20,000 tokens of 20,000 consumers (path and token change together). */
  | 'guard-20k';

export type Kind = 'ceiling' | 'baseline' | 'peer' | 'sentinel';

export interface TargetSpec {
  name: string;
  module: string;
  label: string;
  kind: Kind;
  workload: Workload;
}

/** A client-credentials row: name (the module unless a variant is named), label, kind. */
const cc = (name: string, label: string, kind: Kind, module = name, workload: Workload = 'cc'): TargetSpec => ({
  name,
  module,
  label,
  kind,
  workload,
});

export const TARGETS: readonly TargetSpec[] = [
  cc('ceiling', 'bare node:http, fixed JSON (HTTP ceiling)', 'ceiling'),
  // The floors (targets/floor.ts): the ceiling plus the signatures an answer needs, signed per request.
  cc('floor-cc', 'floor: bare node:http + one ES256 signature per request', 'ceiling', 'floor:cc'),
  cc('floor-two-signatures', 'floor: bare node:http + two ES256 signatures per request (AT + ID token)', 'ceiling', 'floor:two'),
  cc('handwritten-fastify', 'hand-written Fastify + jose', 'baseline', 'handwritten:fastify'),
  cc('handwritten-express', 'hand-written Express + jose', 'baseline', 'handwritten:express'),
  cc('oidc-provider', 'oidc-provider 9 (client_credentials, JWT)', 'peer', 'oidc-provider', 'oidc-cc'),
  cc('node-oauth-express', '@node-oauth/oauth2-server 5 in Express', 'peer'),
  cc('sentinel-fastify', 'sentinel-idp, Fastify adapter', 'sentinel'),
  cc('sentinel-fastify-sync', "sentinel-idp, Fastify adapter, signing: 'sync'", 'sentinel', 'sentinel-fastify:sync'),
  cc('sentinel-express', 'sentinel-idp, Express adapter', 'sentinel'),
  cc('sentinel-koa', 'sentinel-idp, Koa adapter', 'sentinel'),
  cc('sentinel-node', 'sentinel-idp, sentinel.handle on bare node:http', 'sentinel'),
  cc('sentinel-node-sync', "sentinel-idp, sentinel.handle on bare node:http, signing: 'sync'", 'sentinel', 'sentinel-node:sync'),
  cc('sentinel-node-otel', 'sentinel-idp, sentinel.handle, OpenTelemetry SDK sampling every trace', 'sentinel', 'sentinel-node:otel'),
  ...exchangeRows(),
  ...flowRows(),
  ...guardRows(),
  ...agentRows(),
  ...tokenUseRows(),
];

/**
 * A consumer proven by a trusted brand's JWT (RFC 7523, issue 32): the v2 row's token after one more verification,
 * against the same verify + sign written by hand. Each pair verifies the same algorithm: RS256, what the brands'
 * identity providers sign with by default (the headline rows), and ES256 beside it.
 */
function exchangeRows(): TargetSpec[] {
  const pairs: Array<['' | '-es256', 'RS256' | 'ES256']> = [
    ['', 'RS256'],
    ['-es256', 'ES256'],
  ];
  return pairs.flatMap(([infix, alg]) => {
    const workload = `jwt-bearer-${alg.toLowerCase()}` as Workload;
    return [
      cc(
        `exchange${infix}-sentinel-fastify`,
        `sentinel-idp, Fastify adapter: ${alg} brand JWT → consumer-bound token (JWT bearer)`,
        'sentinel',
        'sentinel-fastify',
        workload,
      ),
      cc(
        `exchange${infix}-handwritten-fastify`,
        `hand-written Fastify + jose: ${alg} brand JWT verify + sign`,
        'baseline',
        `handwritten-exchange:${alg.toLowerCase()}`,
        workload,
      ),
    ];
  });
}

/**
 * What MCP agents and devices ask of the service (issue 33): a client-credentials token bound to a resource (an MCP
 * server), and the device flow's poll while the person has not decided; sentinel-idp (Fastify) and oidc-provider 9,
 * which has both.
 */
function agentRows(): TargetSpec[] {
  return [
    cc(
      'agent-cc-sentinel',
      'sentinel-idp (Fastify): client credentials with resource → JWT for the resource',
      'sentinel',
      'sentinel-fastify',
      'rcc',
    ),
    cc('agent-cc-oidc', 'oidc-provider 9: client credentials with resource → JWT for the resource', 'peer', 'oidc-provider', 'oidc-rcc'),
    cc(
      'device-poll-sentinel',
      'sentinel-idp (Fastify): device-code poll, pending → 400 authorization_pending',
      'sentinel',
      'sentinel-fastify',
      'device-poll',
    ),
    cc(
      'device-poll-oidc',
      'oidc-provider 9: device-code poll, pending → 400 authorization_pending',
      'peer',
      'oidc-provider:device',
      'oidc-device-poll',
    ),
  ];
}

/**
 * What clients and bots do with the tokens they hold: UserInfo and introspection against oidc-provider 9, which has
 * both (tokens from each server's own code flow), and delegation (RFC 8693) against a hand-written Fastify + jose
 * endpoint making the same checks (oidc-provider has no token exchange).
 */
function tokenUseRows(): TargetSpec[] {
  return [
    cc('userinfo-sentinel', 'sentinel-idp (Fastify): UserInfo, Bearer access token → sub', 'sentinel', 'sentinel-fastify', 'userinfo'),
    cc('userinfo-oidc', 'oidc-provider 9: UserInfo, Bearer access token → sub', 'peer', 'oidc-provider-flow:opaque', 'oidc-userinfo'),
    cc(
      'introspect-sentinel',
      'sentinel-idp (Fastify): introspection (RFC 7662) of an access token → active',
      'sentinel',
      'sentinel-fastify',
      'introspect',
    ),
    cc(
      'introspect-oidc',
      'oidc-provider 9: introspection (RFC 7662) of an access token → active',
      'peer',
      'oidc-provider-flow:opaque',
      'oidc-introspect',
    ),
    cc(
      'delegation-sentinel',
      'sentinel-idp (Fastify): delegation (RFC 8693), consumer token → token with act',
      'sentinel',
      'sentinel-fastify',
      'delegation',
    ),
    cc(
      'delegation-handwritten-fastify',
      'hand-written Fastify + jose: delegation, verify the subject token + sign with act',
      'baseline',
      'handwritten-delegation',
      'delegation',
    ),
  ];
}

/**
 * The code-flow rows (`flow-*`): authorize with a session, code exchange + PKCE, refresh rotation; sentinel-idp
 * (Fastify) and oidc-provider 9, each on memory and on Redis; and sentinel-idp's core on bare node:http
 * (`flow-*-sentinel-node`), the like of the bare node:http floors bench/instructions.ts measures each path against,
 * also with `signing: 'sync'` for the two paths that sign (`flow-exchange-sentinel-node-sync`, `flow-refresh-…`).
 */
function flowRows(): TargetSpec[] {
  const servers: Array<[string, string, Kind, string, string]> = [
    ['sentinel', 'sentinel-fastify', 'sentinel', '', 'sentinel-idp (Fastify, MemoryStore)'],
    ['sentinel-node', 'sentinel-node', 'sentinel', '', 'sentinel-idp (sentinel.handle on node:http, MemoryStore)'],
    ['oidc', 'oidc-provider-flow', 'peer', 'oidc-', 'oidc-provider 9 (in-memory adapter)'],
    ['sentinel-redis', 'sentinel-fastify:redis', 'sentinel', '', 'sentinel-idp (Fastify, RedisStore)'],
    ['oidc-redis', 'oidc-provider-flow:redis', 'peer', 'oidc-', 'oidc-provider 9 (ioredis adapter)'],
  ];
  const flows: Array<['authorize' | 'exchange' | 'refresh', string]> = [
    ['authorize', 'authorize with a session → 302 + code'],
    ['exchange', 'code exchange + PKCE → AT + RT + ID token'],
    ['refresh', 'refresh rotation → AT + RT + ID token'],
  ];
  // The core signing on the main thread, as the floors sign: the service's own work without the thread-pool hand-off
  // (two per request, each a futex wake-up of a pool thread), for the paths that sign twice.
  const mainThread = flows
    .filter(([flow]) => flow !== 'authorize')
    .map(([flow, what]) => ({
      name: `flow-${flow}-sentinel-node-sync`,
      module: 'sentinel-node:sync',
      label: `sentinel-idp (sentinel.handle on node:http, MemoryStore, signing: 'sync'): ${what}`,
      kind: 'sentinel' as const,
      workload: flow as Workload,
    }));
  return [
    ...flows.flatMap(([flow, what]) =>
      servers.map(([server, module, kind, prefix, label]) => ({
        name: `flow-${flow}-${server}`,
        module,
        label: `${label}: ${what}`,
        kind,
        workload: `${prefix}${flow}` as Workload,
      })),
    ),
    ...mainThread,
  ];
}

/** The bearer-guard rows: each guard with one repeated token and with 20,000 distinct tokens. */
function guardRows(): TargetSpec[] {
  const guards: Array<[string, string, Kind, boolean]> = [
    ['guard-sentinel:fastify', 'sentinel-idp guard, Fastify adapter', 'sentinel', true],
    ['guard-sentinel:express', 'sentinel-idp guard, Express adapter', 'sentinel', true],
    ['guard-sentinel:koa', 'sentinel-idp guard, Koa adapter', 'sentinel', true],
    ['guard-sentinel:fetch', 'sentinel-idp guard, fetch adapter (fetch handler on node:http)', 'sentinel', true],
    ['guard-jose:fastify', 'hand-written Fastify + jose jwtVerify guard', 'baseline', true],
    ['guard-jose:express', 'hand-written Express + jose jwtVerify guard', 'baseline', true],
    ['guard-jose:koa', 'hand-written Koa + jose jwtVerify guard', 'baseline', true],
    ['guard-jose:fetch', 'hand-written fetch handler + jose jwtVerify guard (on node:http)', 'baseline', true],
    ['guard-fastify-jwt', '@fastify/jwt (verify cache on)', 'peer', true],
    ['guard-express-oauth2', 'express-oauth2-jwt-bearer in Express', 'peer', true],
    // Without the cache every request verifies: these two decide where the signature check should run.
    ['guard-sentinel:fastify-nocache', "sentinel-idp guard, Fastify, no cache, verification 'threadpool'", 'sentinel', false],
    ['guard-sentinel:fastify-nocache-sync', "sentinel-idp guard, Fastify, no cache, verification 'sync'", 'sentinel', false],
  ];
  return guards.flatMap(([module, label, kind, both]) => {
    const name = module.replace(':', '-');
    return [
      ...(both ? [{ name: `${name}-one`, module, label: `${label}, one token`, kind, workload: 'guard-one' as const }] : []),
      { name: `${name}-20k`, module, label: `${label}, 20,000 tokens`, kind, workload: 'guard-20k' as const },
    ];
  });
}

/**
 * Ratios computed from the medians of one run; `target` is the project's goal where it has one. The goals: the
 * service costs no more than a hand-written Fastify + jose endpoint doing the same checks and signature, and at
 * least twice the throughput of oidc-provider on client credentials; the guard twice the hand-written jose guard
 * with one token (1.2× with 20,000); the code flows four (authorize) and three (exchange, refresh) times
 * oidc-provider; an OpenTelemetry SDK that samples every trace keeps at least 90 % of the throughput.
 */
export interface RatioSpec {
  label: string;
  numerator: string;
  denominator: string;
  metric: 'rps' | 'cpu';
  /** For rps: the ratio must be ≥ target; for cpu: ≤ target. */
  target?: number;
}

const ratio = (label: string, numerator: string, denominator: string, metric: 'rps' | 'cpu', target?: number): RatioSpec => ({
  label,
  numerator,
  denominator,
  metric,
  ...(target === undefined ? {} : { target }),
});

export const RATIOS: readonly RatioSpec[] = [
  ratio('Fastify adapter ÷ hand-written Fastify + jose, req/s', 'sentinel-fastify', 'handwritten-fastify', 'rps', 1.0),
  ratio('Fastify adapter ÷ hand-written Fastify + jose, CPU µs/req', 'sentinel-fastify', 'handwritten-fastify', 'cpu', 1.0),
  ratio("Fastify adapter, signing 'threadpool' ÷ 'sync', req/s", 'sentinel-fastify', 'sentinel-fastify-sync', 'rps'),
  ratio('Fastify adapter ÷ oidc-provider (JWT), req/s', 'sentinel-fastify', 'oidc-provider', 'rps', 2.0),
  ratio('Express adapter ÷ hand-written Express + jose, req/s', 'sentinel-express', 'handwritten-express', 'rps', 0.9),
  ratio('Express adapter ÷ @node-oauth/oauth2-server (Express), req/s', 'sentinel-express', 'node-oauth-express', 'rps'),
  ratio('Koa adapter ÷ hand-written Express + jose, req/s', 'sentinel-koa', 'handwritten-express', 'rps'),
  ratio('sentinel.handle on node:http ÷ HTTP ceiling, req/s', 'sentinel-node', 'ceiling', 'rps'),
  ratio('sentinel.handle on node:http ÷ HTTP ceiling, CPU µs/req', 'sentinel-node', 'ceiling', 'cpu'),
  ratio('hand-written Fastify + jose ÷ oidc-provider (JWT), req/s', 'handwritten-fastify', 'oidc-provider', 'rps'),
  ratio('sentinel.handle with an OpenTelemetry SDK ÷ without, req/s', 'sentinel-node-otel', 'sentinel-node', 'rps', 0.9),
  ratio('sentinel.handle with an OpenTelemetry SDK ÷ without, CPU µs/req', 'sentinel-node-otel', 'sentinel-node', 'cpu'),
  ...exchangeRatios(),
  ...guardRatios(),
  ...flowRatios(),
  ratio('resource-bound client credentials: sentinel-idp ÷ oidc-provider, req/s', 'agent-cc-sentinel', 'agent-cc-oidc', 'rps'),
  ratio('resource-bound client credentials: sentinel-idp ÷ oidc-provider, CPU µs/req', 'agent-cc-sentinel', 'agent-cc-oidc', 'cpu'),
  ratio('device-code poll: sentinel-idp ÷ oidc-provider, req/s', 'device-poll-sentinel', 'device-poll-oidc', 'rps'),
  ratio('device-code poll: sentinel-idp ÷ oidc-provider, CPU µs/req', 'device-poll-sentinel', 'device-poll-oidc', 'cpu'),
  // No goals: the rows say where each stands.
  ratio('UserInfo: sentinel-idp ÷ oidc-provider, req/s', 'userinfo-sentinel', 'userinfo-oidc', 'rps'),
  ratio('UserInfo: sentinel-idp ÷ oidc-provider, CPU µs/req', 'userinfo-sentinel', 'userinfo-oidc', 'cpu'),
  ratio('introspection: sentinel-idp ÷ oidc-provider, req/s', 'introspect-sentinel', 'introspect-oidc', 'rps'),
  ratio('introspection: sentinel-idp ÷ oidc-provider, CPU µs/req', 'introspect-sentinel', 'introspect-oidc', 'cpu'),
  ratio('delegation: sentinel-idp ÷ hand-written Fastify + jose, req/s', 'delegation-sentinel', 'delegation-handwritten-fastify', 'rps'),
  ratio(
    'delegation: sentinel-idp ÷ hand-written Fastify + jose, CPU µs/req',
    'delegation-sentinel',
    'delegation-handwritten-fastify',
    'cpu',
  ),
];

/**
 * Issue 32, for each brand algorithm: proving the consumer costs one verification more than taking the app's word
 * (≤ 1.5× the v2 row's CPU per request), and no more than the same verify + sign written by hand with jose.
 */
function exchangeRatios(): RatioSpec[] {
  return (['', '-es256'] as const).flatMap((infix) => {
    const alg = infix === '' ? 'RS256' : 'ES256';
    const ours = `exchange${infix}-sentinel-fastify`;
    const theirs = `exchange${infix}-handwritten-fastify`;
    return [
      ratio(`${alg} brand JWT exchange ÷ v2 client credentials (Fastify adapter), CPU µs/req`, ours, 'sentinel-fastify', 'cpu', 1.5),
      ratio(`${alg} brand JWT exchange ÷ v2 client credentials (Fastify adapter), req/s`, ours, 'sentinel-fastify', 'rps'),
      ratio(`${alg} brand JWT exchange: Fastify adapter ÷ hand-written Fastify + jose, req/s`, ours, theirs, 'rps', 1.0),
      ratio(`${alg} brand JWT exchange: Fastify adapter ÷ hand-written Fastify + jose, CPU µs/req`, ours, theirs, 'cpu'),
    ];
  });
}

/** sentinel-idp ÷ oidc-provider for each flow and store, by req/s (goal) and by CPU µs per request. */
function flowRatios(): RatioSpec[] {
  const goals: Array<['authorize' | 'exchange' | 'refresh', number]> = [
    ['authorize', 4],
    ['exchange', 3],
    ['refresh', 3],
  ];
  return goals.flatMap(([flow, goal]) =>
    (['', '-redis'] as const).flatMap((store) => {
      const where = store === '' ? 'memory' : 'Redis';
      const pair = { numerator: `flow-${flow}-sentinel${store}`, denominator: `flow-${flow}-oidc${store}` };
      // The goals stand on the Fastify rows; the core on bare node:http is shown beside them, without a goal.
      const bare = { numerator: `flow-${flow}-sentinel-node`, denominator: pair.denominator };
      return [
        { ...pair, label: `${flow}, ${where}: sentinel-idp ÷ oidc-provider, req/s`, metric: 'rps' as const, target: goal },
        { ...pair, label: `${flow}, ${where}: sentinel-idp ÷ oidc-provider, CPU µs/req`, metric: 'cpu' as const },
        ...(store === ''
          ? [
              { ...bare, label: `${flow}, memory: sentinel-idp on bare node:http ÷ oidc-provider, req/s`, metric: 'rps' as const },
              { ...bare, label: `${flow}, memory: sentinel-idp on bare node:http ÷ oidc-provider, CPU µs/req`, metric: 'cpu' as const },
            ]
          : []),
      ];
    }),
  );
}

/**
 * The guard's ratios. The goals are ratios of req/s; the same ratios of server CPU per request (lower is better,
 * 0.50 = twice as cheap) stand beside them because on a shared 2-core machine req/s is also bounded by the load
 * generator.
 */
function guardRatios(): RatioSpec[] {
  const one = (server: string): string => `guard-${server}-one`;
  const many = (server: string): string => `guard-${server}-20k`;
  const pairs: Array<[string, string, string, number?, number?]> = [
    ['sentinel-fastify', 'jose-fastify', 'Fastify adapter ÷ Fastify + jose', 2.0, 1.2],
    ['sentinel-express', 'jose-express', 'Express adapter ÷ Express + jose', undefined, 1.2],
    ['sentinel-koa', 'jose-koa', 'Koa adapter ÷ Koa + jose', undefined, 1.2],
    ['sentinel-fetch', 'jose-fetch', 'fetch adapter ÷ fetch handler + jose', undefined, 1.2],
    ['sentinel-fastify', 'fastify-jwt', 'Fastify adapter ÷ @fastify/jwt'],
    ['sentinel-express', 'express-oauth2', 'Express adapter ÷ express-oauth2-jwt-bearer'],
  ];
  return [
    ...pairs.flatMap(([ours, theirs, label, oneGoal, manyGoal]) => [
      ratio(`guard, one token: ${label}`, one(ours), one(theirs), 'rps', oneGoal),
      ratio(`guard, 20,000 tokens: ${label}`, many(ours), many(theirs), 'rps', manyGoal),
    ]),
    ratio('guard, one token: Fastify adapter ÷ Fastify + jose, CPU µs/req', one('sentinel-fastify'), one('jose-fastify'), 'cpu', 0.5),
    ratio(
      'guard, 20,000 tokens: Fastify adapter ÷ Fastify + jose, CPU µs/req',
      many('sentinel-fastify'),
      many('jose-fastify'),
      'cpu',
      1 / 1.2,
    ),
    // Issue 36: every adapter's guard ≥ 1.2× its own framework's jose guard with 20,000 tokens; CPU beside it.
    ...(['express', 'koa', 'fetch'] as const).map((framework) =>
      ratio(
        `guard, 20,000 tokens: ${framework} adapter ÷ ${framework} + jose, CPU µs/req`,
        many(`sentinel-${framework}`),
        many(`jose-${framework}`),
        'cpu',
        1 / 1.2,
      ),
    ),
    ratio('guard, one token: Express adapter ÷ Fastify adapter', one('sentinel-express'), one('sentinel-fastify'), 'rps'),
    ratio(
      "guard, no cache, 20,000 tokens: verification 'threadpool' ÷ 'sync'",
      many('sentinel-fastify-nocache'),
      many('sentinel-fastify-nocache-sync'),
      'rps',
    ),
  ];
}
