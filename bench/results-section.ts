/**
 * Each bench script owns one section of bench/RESULTS.md, between `<!-- topic:start -->` and `<!-- topic:end -->`,
 * and rewrites only that section, so scripts run at different times do not erase each other's figures.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * Replaces the `topic` section of `file` with `section` (which carries its own markers), or appends it when the
 * file has none yet. Plain string splicing: a `$` in the figures is never read as a replacement pattern.
 */
export function writeResultsSection(file: string | URL, topic: string, section: string): void {
  const start = `<!-- ${topic}:start -->`;
  const end = `<!-- ${topic}:end -->`;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const from = current.indexOf(start);
  const to = current.indexOf(end, from);
  const next =
    from !== -1 && to !== -1
      ? `${current.slice(0, from)}${section}${current.slice(to + end.length)}`
      : `${current.trimEnd()}\n\n${section}\n`;
  writeFileSync(file, next);
}
