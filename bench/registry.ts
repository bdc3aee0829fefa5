/**
 * The benchmark's rows. `module` is the file under bench/targets/ that bench/server.ts starts in a child process;
 * `workload` is what the load generator sends (bench/client.ts).
 */
export type Workload =
  /** POST the consumer-bound client-credentials request to /sentinel/api/v2/account/{acct}/app/token?state=… */
  | 'cc'
  /** The same grant against oidc-provider's /token with client_secret_post and a resource indicator. */
  | 'oidc-cc'
  /** GET authorize with an existing device session: 302 back to the app with a code. */
  | 'authorize'
  /** POST authorization_code (+ PKCE) to /sentinel/api/account/{acct}/token, one fresh code per request. */
  | 'exchange';

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
    module: 'sentinel-fastify-sync',
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
    name: 'sentinel-authorize',
    module: 'sentinel-fastify',
    label: 'sentinel-idp authorize with a session → 302 + code (Fastify)',
    kind: 'sentinel',
    workload: 'authorize',
  },
  {
    name: 'sentinel-exchange',
    module: 'sentinel-fastify',
    label: 'sentinel-idp code exchange, authorization_code + PKCE (Fastify)',
    kind: 'sentinel',
    workload: 'exchange',
  },
];

/** Ratios computed from the medians of one run; `target` is the goal of issue 9 where there is one. */
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
];
