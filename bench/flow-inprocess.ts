/**
 * CPU µs per call of the code-flow operations through `sentinel.handle()` called directly: no sockets, no framework,
 * no load generator on the same cores. What remains is the service's own work per request, the part of a flow row
 * this project controls, so a change to a flow shows up here before it is lost in the HTTP rows' noise.
 *
 *   node --import tsx bench/flow-inprocess.ts [authorize|exchange|refresh|all] [rounds] [calls] [root,root…]
 *
 * Each source root (default: this checkout; others as for bench/cc-inprocess.ts, e.g. `git worktree add` of another
 * commit with a `node_modules` link) is built as the bench builds it and runs on a MemoryStore with signing on the
 * main thread, so that every microsecond of a call is counted on the one thread measured. One process loads every
 * root and alternates between them call batch by call batch, so the roots see the same contention; the figure is
 * the median over rounds, and for the other roots also the median per-round ratio to the first.
 *
 * The session comes from the real sign-in (the login page over node:http, bench/client.ts); the codes and refresh
 * tokens a batch redeems are minted before it, outside the measurement.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { login } from './client.js';
import { ACCOUNT_ID, createKeyPair, FORM_CONTENT_TYPE, HOST } from './fixtures.js';
import { authorizeQuery, exchangeBody, refreshBody } from './flow-client.js';
import { buildLibraryForBench } from './library-build.js';
import { median } from './report.js';
import {
  createBenchSentinel,
  importRepoModule,
  type SentinelLike,
  type SentinelRequestLike,
  type SentinelResponseLike,
} from './targets/sentinel-common.js';

interface NodeHelpers {
  fromNodeRequest(request: IncomingMessage, input: { url: string; parsedBody: () => unknown }): SentinelRequestLike;
  writeNodeResponse(response: ServerResponse, result: SentinelResponseLike): void;
}

const WORKLOADS = ['authorize', 'exchange', 'refresh'] as const;
type Workload = (typeof WORKLOADS)[number];

const [which = 'all', roundsArg = '7', callsArg = '2000', rootsArg] = process.argv.slice(2);
const ROUNDS = Number(roundsArg);
const CALLS = Number(callsArg);
/** Calls of one root before the next root's turn, ten in flight at a time. */
const BATCH = 200;
const IN_FLIGHT = 10;
const ROOTS = (rootsArg ?? fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '')).split(',');

function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/** One root's service, signed in, with the requests of each workload. */
class Subject {
  readonly #sentinel: SentinelLike;
  readonly #port: number;
  readonly #cookie: string;

  private constructor(sentinel: SentinelLike, port: number, cookie: string) {
    this.#sentinel = sentinel;
    this.#port = port;
    this.#cookie = cookie;
  }

  /** Builds the root's service and signs in through its login page, served once over node:http. */
  static async start(root: string): Promise<Subject> {
    const { fromNodeRequest, writeNodeResponse } = await importRepoModule<NodeHelpers>('adapters/node/index.js', root);
    // The port only names the issuer and the redirect URI: take a free one, then build the service for it.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
    const port = (server.address() as AddressInfo).port;
    const sentinel = await createBenchSentinel(port, 'sync', undefined, root);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      sentinel.handle(fromNodeRequest(req, { url: req.url ?? '/', parsedBody: () => undefined })).then((response) => {
        if (response === null) res.writeHead(404).end();
        else writeNodeResponse(res, response);
      });
    });
    const cookie = await login(port);
    server.close();
    return new Subject(sentinel, port, cookie);
  }

  async #call(request: SentinelRequestLike, status: number): Promise<SentinelResponseLike> {
    const response = await this.#sentinel.handle(request);
    if (response?.status !== status) throw new Error(`answered ${response?.status}: ${response?.body?.slice(0, 200)}`);
    return response;
  }

  #authorize(): SentinelRequestLike {
    // The query the flow rows send (bench/flow-client.ts), parsed as an adapter would hand it over.
    const query = new URLSearchParams(authorizeQuery(this.#port));
    return { method: 'GET', path: `/sentinel/api/account/${ACCOUNT_ID}/authorize`, query, headers: { cookie: this.#cookie }, ip: HOST };
  }

  #token(form: string): SentinelRequestLike {
    const body = Buffer.from(form);
    return {
      method: 'POST',
      path: `/sentinel/api/account/${ACCOUNT_ID}/token`,
      query: new URLSearchParams(),
      headers: { 'content-type': FORM_CONTENT_TYPE, 'content-length': String(body.length) },
      // As the Node adapters hand a body over: read on demand.
      body: async () => body,
      ip: HOST,
    };
  }

  async #code(): Promise<string> {
    const location = String((await this.#call(this.#authorize(), 302)).headers.location);
    return new URL(location).searchParams.get('code') as string;
  }

  #exchange(code: string): SentinelRequestLike {
    return this.#token(exchangeBody(code, this.#port));
  }

  /** `count` calls of `workload`, with what they redeem minted now (outside the measurement). */
  async prepare(workload: Workload, count: number): Promise<Array<() => Promise<unknown>>> {
    if (workload === 'authorize') return Array.from({ length: count }, () => () => this.#call(this.#authorize(), 302));
    const codes: string[] = [];
    for (let i = 0; i < count; i++) codes.push(await this.#code());
    if (workload === 'exchange') return codes.map((code) => () => this.#call(this.#exchange(code), 200));
    const tokens: string[] = [];
    for (const code of codes) {
      const answer = await this.#call(this.#exchange(code), 200);
      tokens.push((JSON.parse(answer.body ?? '{}') as { refresh_token: string }).refresh_token);
    }
    return tokens.map((token) => () => this.#call(this.#token(refreshBody(token)), 200));
  }
}

/** CPU µs per call of one batch, `IN_FLIGHT` at a time (as a server interleaves concurrent requests). */
async function measure(calls: Array<() => Promise<unknown>>): Promise<number> {
  const started = cpuMicros();
  for (let i = 0; i < calls.length; i += IN_FLIGHT) await Promise.all(calls.slice(i, i + IN_FLIGHT).map((run) => run()));
  return cpuMicros() - started;
}

async function main(): Promise<void> {
  const workloads: Workload[] = which === 'all' ? [...WORKLOADS] : [which as Workload];
  if (!workloads.every((workload) => WORKLOADS.includes(workload))) throw new Error(`unknown workload ${which}`);
  process.env.BENCH_PRIVATE_JWK ??= JSON.stringify((await createKeyPair()).privateJwk);
  const subjects: Subject[] = [];
  for (const root of ROOTS) {
    await buildLibraryForBench(root);
    subjects.push(await Subject.start(root));
  }
  // results[workload][root] = µs per call, one per round
  const results = new Map(workloads.map((workload) => [workload, ROOTS.map(() => [] as number[])]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const workload of workloads) {
      const spent = ROOTS.map(() => 0);
      for (let done = 0; done < CALLS; done += BATCH) {
        for (const [index, subject] of subjects.entries()) {
          const calls = await subject.prepare(workload, Math.min(BATCH, CALLS - done));
          spent[index] = (spent[index] as number) + (await measure(calls));
        }
      }
      // The first round warms every root up (JIT, pools, the store's first entries): reported, not counted.
      for (const [index, us] of spent.entries()) results.get(workload)?.[index]?.push(us / CALLS);
    }
  }
  for (const [workload, byRoot] of results) {
    const counted = byRoot.map((values) => values.slice(1));
    const first = counted[0] as number[];
    counted.forEach((values, index) => {
      const ratio = index === 0 ? '' : `  ${median(values.map((v, round) => v / (first[round] as number))).toFixed(3)}× the first`;
      const rounds = (byRoot[index] as number[]).map((v) => v.toFixed(1)).join(', ');
      console.log(
        `${workload.padEnd(9)} ${ROOTS[index]}: ${median(values).toFixed(1)} µs/call${ratio}  (rounds, first uncounted: ${rounds})`,
      );
    });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
