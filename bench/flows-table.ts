/**
 * The code-flow rows of the hot-paths section (bench/hot-paths.ts): authorize with a session, code exchange + PKCE
 * and refresh rotation, sentinel-idp against oidc-provider 9 on memory and on Redis (bench/flow-client.ts).
 */
import { median, type RowResult } from './report.js';

function fmt(value: number, digits = 0): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '–';
}

/** Markdown lines: what the rows do, then one table line per flow row of the run (none when none ran). */
export function flowTable(rows: RowResult[]): string[] {
  const flows = rows.filter((r) => r.spec.name.startsWith('flow-'));
  if (flows.length === 0) return [];
  const lines = [
    '',
    'Code flow: both servers get the same authorization request (`response_type=code`, PKCE S256, `scope=openid offline_access api:read`, state, nonce) from a browser session made through each one\'s own sign-in, and issue ES256 JWT access tokens (`at+jwt`), ES256 ID tokens and a refresh token rotated on every use; client_secret_post. "authorize": GET with the session cookie → the redirect with a new code (sentinel-idp 302, oidc-provider 303). "exchange": every request redeems a fresh code minted before the window. "refresh": 150 chains (3 per connection), each request presenting the refresh token the previous answer of its chain returned. Before each round the runner verifies the first answers (code and state in the redirect; both JWTs\' signatures and claims; a refresh token; the rotated-away refresh token refused with 400). oidc-provider runs on an unbounded in-memory adapter (its own is an LRU of 1,000 entries, too small for a round\'s codes) and on the ioredis `Adapter` of its documentation; sentinel-idp on MemoryStore and RedisStore (the client options `redisClientOptions()` recommends); both on the Redis at 127.0.0.1:6379, both ioredis clients auto-pipelining.',
    '',
    '| code flow | req/s | p99 ms | CPU µs/req | RSS MB | status |',
    '|---|---:|---:|---:|---:|---|',
  ];
  for (const row of flows) {
    const ok = row.status === 'ok' && row.rounds.length > 0;
    const cell = (metric: 'rps' | 'p99ms' | 'cpuUsPerRequest' | 'rssMB', digits = 0): string =>
      ok ? fmt(median(row.rounds.map((r) => r[metric])), digits) : '–';
    const status = row.status === 'ok' ? `ok (${row.rounds.map((r) => fmt(r.rps)).join(', ')})` : `${row.status}: ${row.reason ?? ''}`;
    lines.push(
      `| ${row.spec.label} | ${cell('rps')} | ${cell('p99ms', 1)} | ${cell('cpuUsPerRequest')} | ${cell('rssMB')} | ${status.replace(/\|/g, '\\|')} |`,
    );
  }
  return lines;
}
