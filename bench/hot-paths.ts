/**
 * The hot-paths section of bench/RESULTS.md and the chart bench/ratios.svg, written by every `npm run bench`: the
 * guard rows (one repeated token, 20,000 distinct tokens) with their peers and ratios of this run. A partial run
 * (BENCH_ONLY) rewrites only this section, the chart and its link, never the main tables.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { ratiosChart } from './chart.js';
import { flowTable } from './flows-table.js';
import { CHART_LINK, median, type RatioRow, type RowResult, type RunSettings, ratios } from './report.js';

function fmt(value: number, digits = 0): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '–';
}

function section(rows: RowResult[], hot: RatioRow[], settings: RunSettings, startedAt: Date): string {
  const guardLoad = `Guard rows pipelined ${process.env.BENCH_GUARD_PIPELINING ?? '10'} deep (bench/README.md).`;
  const lines = [
    '<!-- hot-paths:start -->',
    '## Hot paths',
    '',
    `Written by \`npm run bench\` on ${startedAt.toISOString()}: ${settings.rounds} round(s) × ${settings.durationSeconds} s (+${settings.warmupSeconds} s warm-up), ${settings.connections} connections, ${os.cpus().length} cores shared by server and load generator, Node.js ${process.version}; load average at the end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}. Medians; ratios of medians of this run. Chart: [ratios.svg](ratios.svg). ${guardLoad}`,
    '',
    'Bearer guard (Fastify, Express and Koa, each against a hand-written jose guard in the same framework): `GET /api/account/123456/consumer/{consumer}/tokens` with `Authorization: Bearer <ES256 at+jwt>`; every guard checks signature, `typ` (where it can), issuer, audience, expiry, and that the path\'s consumer is the token\'s `sub` with `gty=client_credentials`. Before each round the runner checks that the guard answers 200 with the consumer, and 401 for an altered signature and for another consumer. "one token": the same token on every request. "20,000 tokens": 20,000 tokens of 20,000 consumers in turn ; each round starts a fresh server, so the first 20,000 requests of a round (warm-up included) are first sightings that every guard verifies, and only later requests can be served by a verified-token cache (sentinel-idp, @fastify/jwt). The no-cache rows verify every request.',
    '',
    '| guard | workload | req/s | p99 ms | CPU µs/req | RSS MB | status |',
    '|---|---|---:|---:|---:|---:|---|',
  ];
  for (const row of rows.filter((r) => r.spec.workload.startsWith('guard'))) {
    const ok = row.status === 'ok' && row.rounds.length > 0;
    const cell = (metric: 'rps' | 'p99ms' | 'cpuUsPerRequest' | 'rssMB', digits = 0): string =>
      ok ? fmt(median(row.rounds.map((r) => r[metric])), digits) : '–';
    const status = row.status === 'ok' ? `ok (${row.rounds.map((r) => fmt(r.rps)).join(', ')})` : `${row.status}: ${row.reason ?? ''}`;
    const label = row.spec.label.replace(/, (one token|20,000 tokens)$/, '');
    const workload = row.spec.workload === 'guard-one' ? 'one token' : '20,000 tokens';
    lines.push(
      `| ${label} | ${workload} | ${cell('rps')} | ${cell('p99ms', 1)} | ${cell('cpuUsPerRequest')} | ${cell('rssMB')} | ${status.replace(/\|/g, '\\|')} |`,
    );
  }
  lines.push(...flowTable(rows));
  lines.push('', '| ratio (req/s unless CPU) | value | goal | |', '|---|---:|---:|---|');
  for (const r of hot) {
    const goal = r.target === undefined ? '' : `${r.metric === 'rps' ? '≥' : '≤'} ${Number(r.target.toFixed(2))}×`;
    const verdict = r.missing ?? (r.met === undefined ? '' : r.met ? 'met' : '**not met**');
    lines.push(`| ${r.label} | ${Number.isFinite(r.value) ? `${r.value.toFixed(2)}×` : '–'} | ${goal} | ${verdict} |`);
  }
  const notes = join(dirname(new URL(import.meta.url).pathname), 'HOT-PATHS.md');
  if (existsSync(notes)) lines.push('', readFileSync(notes, 'utf8').trim());
  lines.push('<!-- hot-paths:end -->');
  return lines.join('\n');
}

/**
 * The main ratios a partial run did not measure, from the last full run's results.json, labelled with its date so
 * the chart still shows every goal.
 */
function fromLastFullRun(out: string, rows: RowResult[]): RatioRow[] {
  const file = join(dirname(out), 'results.json');
  if (!existsSync(file)) return [];
  const measured = new Set(
    ratios(rows)
      .filter((r) => Number.isFinite(r.value))
      .map((r) => r.label),
  );
  const last = JSON.parse(readFileSync(file, 'utf8')) as { startedAt: string; ratios?: Array<Omit<RatioRow, 'hotPath'>> };
  return (last.ratios ?? [])
    .filter((r) => !measured.has(r.label) && typeof r.value === 'number')
    .map((r) => ({ ...r, hotPath: false, label: `${r.label} (run of ${last.startedAt.slice(0, 10)})` }));
}

/** Writes the section into `out` (replacing it, or appending it) and the chart next to it. */
export async function writeHotPaths(out: string, rows: RowResult[], settings: RunSettings, startedAt: Date): Promise<string[]> {
  const all = [...ratios(rows).filter((r) => Number.isFinite(r.value)), ...fromLastFullRun(out, rows)];
  const hot = ratios(rows).filter((r) => r.hotPath);
  let text = existsSync(out) ? readFileSync(out, 'utf8') : '# sentinel-idp benchmark results\n';
  if (!text.includes(CHART_LINK)) text = text.replace(/^(# [^\n]*\n)/, `$1\n${CHART_LINK}\n`);
  const body = section(rows, hot, settings, startedAt);
  const pattern = /<!-- hot-paths:start -->[\s\S]*?<!-- hot-paths:end -->/;
  text = pattern.test(text) ? text.replace(pattern, () => body) : `${text.trimEnd()}\n${body}\n`;
  await writeFile(out, text);
  const chart = join(dirname(out), 'ratios.svg');
  await writeFile(
    chart,
    ratiosChart(all, `sentinel-idp: ratios of the run of ${startedAt.toISOString().slice(0, 16)}Z against their goals`),
  );
  return [out, chart];
}
