/**
 * Accessibility audit of a page with axe-core, injected from node_modules (no network). The service's pages
 * forbid scripts by CSP, so audits run in a context created with `bypassCSP: true`; flows run without it.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** One axe finding, trimmed to what a failure message needs. */
export interface AxeFinding {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

interface AxeResultShape {
  violations: { id: string; impact?: string | null; help: string; nodes: { target: unknown[] }[] }[];
}

/**
 * The serious and critical violations on the current page (WCAG 2.x A/AA rules and axe's best practices).
 * @example expect(await seriousViolations(page)).toEqual([]);
 */
export async function seriousViolations(page: Page): Promise<AxeFinding[]> {
  await page.addScriptTag({ content: AXE_SOURCE });
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<unknown> } }).axe;
    return (await axe.run(document, { resultTypes: ['violations'] })) as AxeResultShape;
  });
  return result.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({
      id: violation.id,
      impact: violation.impact ?? null,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.map(String).join(' ')),
    }));
}
