/**
 * The exchange example (`npm run example:exchange`) as a test: the brand's identity provider signs with jose, the
 * app proves the consumer by JWT bearer, a bot acts for them by token exchange, the guarded route sees `act`, and a
 * replay and a wider scope are refused — each step printed OK.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('npm run example:exchange', () => {
  it('completes every step', () => {
    // What `npm run example:exchange` runs, without npm's own start-up.
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'examples/exchange/run.ts'], { encoding: 'utf8', timeout: 240_000 });
    const lines = result.stdout.trim().split('\n');
    const output = `${result.stdout}\n${result.stderr}`;
    expect(
      lines.filter((line) => line.includes(': OK ')),
      output,
    ).toHaveLength(7);
    expect(
      lines.some((line) => line.includes(': FAILED ')),
      output,
    ).toBe(false);
    expect(lines.find((line) => line.startsWith('bot: OK posted for the consumer'))).toMatch(/"scope":"messages:write"/);
    expect(lines.find((line) => line.startsWith('replay:'))).toMatch(/400 invalid_grant: the assertion has already been used$/);
    expect(lines.at(-1)).toBe('exchange example: all steps completed');
    expect(result.status).toBe(0);
  }, 300_000);
});
