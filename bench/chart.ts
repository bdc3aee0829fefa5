/**
 * bench/ratios.svg: every ratio of a run as a horizontal bar against its goal, drawn as plain SVG text so the bench
 * needs no charting dependency. Green: goal met; red: not met; grey: no goal (shown for context). The goal is a
 * black tick on the bar's scale; 1× is a dashed line.
 */
import type { RatioRow } from './report.js';

const WIDTH = 960;
const LABEL_WIDTH = 470;
const ROW_HEIGHT = 24;
const TOP = 44;

function escapeXML(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function ratiosChart(rows: RatioRow[], title: string): string {
  const shown = rows.filter((r) => Number.isFinite(r.value));
  const max = Math.max(2, ...shown.map((r) => Math.max(r.value, r.target ?? 0))) * 1.1;
  const plot = WIDTH - LABEL_WIDTH - 70;
  const x = (value: number): number => LABEL_WIDTH + (value / max) * plot;
  const height = TOP + shown.length * ROW_HEIGHT + 30;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXML(title)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${escapeXML(title)}</text>`,
    `<text x="10" y="36" fill="#555">bar: measured ratio; black tick: goal (req/s ratios: reach it; CPU ratios: stay under it); dashed: 1×</text>`,
  ];
  shown.forEach((row, index) => {
    const y = TOP + index * ROW_HEIGHT;
    const colour = row.met === undefined ? '#9e9e9e' : row.met ? '#2e7d32' : '#c62828';
    parts.push(`<text x="${LABEL_WIDTH - 8}" y="${y + 15}" text-anchor="end">${escapeXML(row.label)}</text>`);
    parts.push(`<rect x="${LABEL_WIDTH}" y="${y + 4}" width="${(x(row.value) - LABEL_WIDTH).toFixed(1)}" height="14" fill="${colour}"/>`);
    const goal = row.target === undefined ? '' : ` (goal ${row.metric === 'rps' ? '≥' : '≤'} ${Number(row.target.toFixed(2))}×)`;
    parts.push(`<text x="${(x(row.value) + 4).toFixed(1)}" y="${y + 15}">${row.value.toFixed(2)}×${escapeXML(goal)}</text>`);
    if (row.target !== undefined) {
      const gx = x(row.target).toFixed(1);
      parts.push(`<line x1="${gx}" x2="${gx}" y1="${y + 1}" y2="${y + 21}" stroke="#000" stroke-width="2"/>`);
    }
  });
  const one = x(1).toFixed(1);
  parts.push(`<line x1="${one}" x2="${one}" y1="${TOP}" y2="${height - 26}" stroke="#555" stroke-dasharray="4 3"/>`);
  parts.push(`<text x="${one}" y="${height - 12}" text-anchor="middle" fill="#555">1×</text>`, '</svg>', '');
  return parts.join('\n');
}
