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

export const TARGETS: readonly TargetSpec[] = [
  { name: 'ceiling', module: 'ceiling', label: 'bare node:http, fixed JSON (HTTP ceiling)', kind: 'ceiling', workload: 'cc' },
  { name: 'handwritten-fastify', module: 'handwritten-fastify', label: 'hand-written Fastify + jose', kind: 'baseline', workload: 'cc' },
  { name: 'handwritten-express', module: 'handwritten-express', label: 'hand-written Express + jose', kind: 'baseline', workload: 'cc' },
  { name: 'oidc-provider', module: 'oidc-provider', label: 'oidc-provider 9 (client_credentials, JWT)', kind: 'peer', workload: 'oidc-cc' },
  {
    name: 'node-oauth-express',
    module: 'node-oauth-express',
    label: '@node-oauth/oauth2-server 5 in Express',
    kind: 'peer',
    workload: 'cc',
  },
  { name: 'sentinel-fastify', module: 'sentinel-fastify', label: 'sentinel-idp, Fastify adapter', kind: 'sentinel', workload: 'cc' },
  {
    name: 'sentinel-fastify-sync',
    module: 'sentinel-fastify:sync',
    label: "sentinel-idp, Fastify adapter, signing: 'sync'",
    kind: 'sentinel',
    workload: 'cc',
  },
  { name: 'sentinel-express', module: 'sentinel-express', label: 'sentinel-idp, Express adapter', kind: 'sentinel', workload: 'cc' },
  { name: 'sentinel-koa', module: 'sentinel-koa', label: 'sentinel-idp, Koa adapter', kind: 'sentinel', workload: 'cc' },
  {
    name: 'sentinel-fetch',
    module: 'sentinel-fetch',
    label: 'sentinel-idp, fetch adapter (node:http → Request)',
    kind: 'sentinel',
    workload: 'cc',
  },
  {
    name: 'sentinel-node',
    module: 'sentinel-node',
    label: 'sentinel-idp, sentinel.handle on bare node:http',
    kind: 'sentinel',
    workload: 'cc',
  },
  {
    name: 'sentinel-node-sync',
    module: 'sentinel-node:sync',
    label: "sentinel-idp, sentinel.handle on bare node:http, signing: 'sync'",
    kind: 'sentinel',
    workload: 'cc',
  },
  {
    name: 'sentinel-node-otel',
    module: 'sentinel-node:otel',
    label: 'sentinel-idp, sentinel.handle on bare node:http, OpenTelemetry SDK registered (every trace sampled)',
    kind: 'sentinel',
    workload: 'cc',
  },
  ...flowRows(),
  ...guardRows(),
];

/**
 * The code-flow rows (`flow-*`): authorize with a session, code exchange + PKCE, refresh rotation; sentinel-idp
 * (Fastify) and oidc-provider 9, each on memory and on Redis.
 */
function flowRows(): TargetSpec[] {
  const servers: Array<[string, string, Kind, string, string]> = [
    ['sentinel', 'sentinel-fastify', 'sentinel', '', 'sentinel-idp (Fastify, MemoryStore)'],
    ['oidc', 'oidc-provider-flow', 'peer', 'oidc-', 'oidc-provider 9 (in-memory adapter)'],
    ['sentinel-redis', 'sentinel-fastify:redis', 'sentinel', '', 'sentinel-idp (Fastify, RedisStore)'],
    ['oidc-redis', 'oidc-provider-flow:redis', 'peer', 'oidc-', 'oidc-provider 9 (ioredis adapter)'],
  ];
  const flows: Array<['authorize' | 'exchange' | 'refresh', string]> = [
    ['authorize', 'authorize with a session → 302 + code'],
    ['exchange', 'code exchange + PKCE → AT + RT + ID token'],
    ['refresh', 'refresh rotation → AT + RT + ID token'],
  ];
  return flows.flatMap(([flow, what]) =>
    servers.map(([server, module, kind, prefix, label]) => ({
      name: `flow-${flow}-${server}`,
      module,
      label: `${label}: ${what}`,
      kind,
      workload: `${prefix}${flow}` as Workload,
    })),
  );
}

/** The bearer-guard rows: each guard with one repeated token and with 20,000 distinct tokens. */
function guardRows(): TargetSpec[] {
  const guards: Array<[string, string, Kind, boolean]> = [
    ['guard-sentinel:fastify', 'sentinel-idp guard, Fastify adapter', 'sentinel', true],
    ['guard-sentinel:express', 'sentinel-idp guard, Express adapter', 'sentinel', true],
    ['guard-sentinel:koa', 'sentinel-idp guard, Koa adapter', 'sentinel', true],
    ['guard-jose:fastify', 'hand-written Fastify + jose jwtVerify guard', 'baseline', true],
    ['guard-jose:express', 'hand-written Express + jose jwtVerify guard', 'baseline', true],
    ['guard-jose:koa', 'hand-written Koa + jose jwtVerify guard', 'baseline', true],
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

export const RATIOS: readonly RatioSpec[] = [
  {
    label: 'Fastify adapter ÷ hand-written Fastify + jose, req/s',
    numerator: 'sentinel-fastify',
    denominator: 'handwritten-fastify',
    metric: 'rps',
    target: 1.0,
  },
  {
    label: 'Fastify adapter ÷ hand-written Fastify + jose, CPU µs/req',
    numerator: 'sentinel-fastify',
    denominator: 'handwritten-fastify',
    metric: 'cpu',
    target: 1.0,
  },
  {
    label: "Fastify adapter, signing 'threadpool' ÷ 'sync', req/s",
    numerator: 'sentinel-fastify',
    denominator: 'sentinel-fastify-sync',
    metric: 'rps',
  },
  {
    label: 'Fastify adapter ÷ oidc-provider (JWT), req/s',
    numerator: 'sentinel-fastify',
    denominator: 'oidc-provider',
    metric: 'rps',
    target: 2.0,
  },
  {
    label: 'Express adapter ÷ hand-written Express + jose, req/s',
    numerator: 'sentinel-express',
    denominator: 'handwritten-express',
    metric: 'rps',
    target: 0.9,
  },
  {
    label: 'Express adapter ÷ @node-oauth/oauth2-server (Express), req/s',
    numerator: 'sentinel-express',
    denominator: 'node-oauth-express',
    metric: 'rps',
  },
  {
    label: 'Koa adapter ÷ hand-written Express + jose, req/s',
    numerator: 'sentinel-koa',
    denominator: 'handwritten-express',
    metric: 'rps',
  },
  {
    label: 'fetch adapter ÷ sentinel.handle on node:http, req/s',
    numerator: 'sentinel-fetch',
    denominator: 'sentinel-node',
    metric: 'rps',
  },
  { label: 'sentinel.handle on node:http ÷ HTTP ceiling, req/s', numerator: 'sentinel-node', denominator: 'ceiling', metric: 'rps' },
  { label: 'hand-written Fastify + jose ÷ HTTP ceiling, req/s', numerator: 'handwritten-fastify', denominator: 'ceiling', metric: 'rps' },
  {
    label: 'hand-written Fastify + jose ÷ oidc-provider (JWT), req/s',
    numerator: 'handwritten-fastify',
    denominator: 'oidc-provider',
    metric: 'rps',
  },
  {
    label: 'sentinel.handle with an OpenTelemetry SDK ÷ without, req/s',
    numerator: 'sentinel-node-otel',
    denominator: 'sentinel-node',
    metric: 'rps',
    target: 0.9,
  },
  ...guardRatios(),
  ...flowRatios(),
];

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
      return [
        { ...pair, label: `${flow}, ${where}: sentinel-idp ÷ oidc-provider, req/s`, metric: 'rps' as const, target: goal },
        { ...pair, label: `${flow}, ${where}: sentinel-idp ÷ oidc-provider, CPU µs/req`, metric: 'cpu' as const },
      ];
    }),
  );
}

function guardRatios(): RatioSpec[] {
  const versus = (numerator: string, denominator: string, label: string, target?: number): RatioSpec => ({
    label,
    numerator,
    denominator,
    metric: 'rps',
    ...(target === undefined ? {} : { target }),
  });
  // The goals are ratios of req/s; the same ratios of server CPU per request (lower is better, 0.50 = twice as
  // cheap) stand beside them because on the shared 2-core machine req/s is also bounded by the load generator.
  const cheaper = (numerator: string, denominator: string, label: string, target?: number): RatioSpec => ({
    ...versus(numerator, denominator, label, target),
    metric: 'cpu',
  });
  return [
    versus('guard-sentinel-fastify-one', 'guard-jose-fastify-one', 'guard, one token: Fastify adapter ÷ Fastify + jose', 2.0),
    versus('guard-sentinel-fastify-20k', 'guard-jose-fastify-20k', 'guard, 20,000 tokens: Fastify adapter ÷ Fastify + jose', 1.2),
    cheaper('guard-sentinel-fastify-one', 'guard-jose-fastify-one', 'guard, one token: Fastify adapter ÷ Fastify + jose, CPU µs/req', 0.5),
    cheaper(
      'guard-sentinel-fastify-20k',
      'guard-jose-fastify-20k',
      'guard, 20,000 tokens: Fastify adapter ÷ Fastify + jose, CPU µs/req',
      1 / 1.2,
    ),
    versus('guard-sentinel-express-one', 'guard-jose-express-one', 'guard, one token: Express adapter ÷ Express + jose'),
    versus('guard-sentinel-express-20k', 'guard-jose-express-20k', 'guard, 20,000 tokens: Express adapter ÷ Express + jose'),
    versus('guard-sentinel-koa-one', 'guard-jose-koa-one', 'guard, one token: Koa adapter ÷ Koa + jose'),
    versus('guard-sentinel-koa-20k', 'guard-jose-koa-20k', 'guard, 20,000 tokens: Koa adapter ÷ Koa + jose'),
    versus('guard-sentinel-fastify-one', 'guard-fastify-jwt-one', 'guard, one token: Fastify adapter ÷ @fastify/jwt'),
    versus('guard-sentinel-fastify-20k', 'guard-fastify-jwt-20k', 'guard, 20,000 tokens: Fastify adapter ÷ @fastify/jwt'),
    versus('guard-sentinel-express-one', 'guard-express-oauth2-one', 'guard, one token: Express adapter ÷ express-oauth2-jwt-bearer'),
    versus('guard-sentinel-express-20k', 'guard-express-oauth2-20k', 'guard, 20,000 tokens: Express adapter ÷ express-oauth2-jwt-bearer'),
    versus('guard-sentinel-express-one', 'guard-sentinel-fastify-one', 'guard, one token: Express adapter ÷ Fastify adapter'),
    versus(
      'guard-sentinel-fastify-nocache-20k',
      'guard-sentinel-fastify-nocache-sync-20k',
      "guard, no cache, 20,000 tokens: verification 'threadpool' ÷ 'sync'",
    ),
  ];
}
