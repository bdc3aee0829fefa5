/**
 * The demo application's page frame. It wears the login page's look (its default palette, system font stack and
 * card) so that the walk from the app to the login page and back stays in one design, and sends the login page's
 * headers: a Content-Security-Policy whose one allowance is a per-response style nonce (no script anywhere: every
 * demo page works with JavaScript off), `frame-ancestors 'none'` and `X-Frame-Options: DENY` against clickjacking,
 * `no-store` (the pages show token claims), no referrer, no sniffing.
 */
import { randomBytes } from 'node:crypto';
import type { SentinelResponse } from 'sentinel-idp';

/** Escapes text for HTML content and double-quoted attributes. */
export function escapeHTML(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// The login page's default colours; every text/background pair meets WCAG AA (4.5:1).
const COLORS =
  ':root{--brand:#1d4ed8;--brand-text:#fff;--background:#f3f4f6;--surface:#fff;--text:#111827;--muted:#4b5563;' +
  '--border:#6b7280;--card-border:#e5e7eb;--error:#b91c1c;--error-background:#fef2f2;--ok:#166534;--ok-background:#f0fdf4;--focus:#1d4ed8}';

// The login page's card, wider: claims tables and JSON need room. Direction-neutral properties only.
const STYLES = `
*,*::before,*::after{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;padding:1rem;
  background:var(--background);color:var(--text);
  font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif;line-height:1.5}
main{width:100%;max-width:52rem}
.card{background:var(--surface);border:1px solid var(--card-border);border-radius:.75rem;padding:2rem 1.5rem;
  box-shadow:0 10px 25px -12px rgba(0,0,0,.25);overflow-wrap:anywhere}
.card>:last-child{margin-bottom:0}
header{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem 1rem;margin:0 0 1.5rem}
.brand{font-weight:600;font-size:1.125rem;margin:0}
header form{margin:0}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .5rem}
h2{font-size:1.125rem;margin:0 0 .75rem}
section{margin:0 0 2rem}
.lead{color:var(--muted);margin:0 0 1.5rem}
.lead strong{color:var(--text)}
a{color:var(--brand)}
a:focus,button:focus{outline:3px solid var(--focus);outline-offset:2px}
button,.button{display:inline-block;font:inherit;font-weight:600;padding:.625rem 1.25rem;border-radius:.5rem;cursor:pointer;
  text-decoration:none;text-align:center}
.primary{background:var(--brand);color:var(--brand-text);border:1px solid var(--brand)}
.secondary{background:var(--surface);color:var(--text);border:1px solid var(--border)}
.tries{list-style:none;padding:0;margin:0;display:grid;gap:.75rem}
.tries li{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;border:1px solid var(--card-border);border-radius:.5rem;padding:.75rem}
.tries form{margin:0;flex:none}
.tries button{min-width:15rem}
.tries p{margin:0;flex:1 1 16rem;color:var(--muted);font-size:.9375rem}
.result{border:1px solid var(--ok);background:var(--ok-background);border-radius:.5rem;padding:.75rem 1rem;margin:0 0 2rem}
.result.refused{border-color:var(--error);background:var(--error-background)}
.result h2{margin:0 0 .5rem}
.result p{margin:0 0 .5rem}
.error{background:var(--error-background);color:var(--error);border:1px solid var(--error);border-radius:.5rem;
  padding:.75rem;margin:0 0 1rem;font-weight:600}
pre{margin:0;padding:.75rem;background:var(--surface);border:1px solid var(--card-border);border-radius:.5rem;
  overflow-x:auto;font-size:.875rem;white-space:pre-wrap;overflow-wrap:anywhere}
.table{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.9375rem}
caption{text-align:start;font-weight:600;font-size:1.125rem;margin:0 0 .5rem}
th,td{text-align:start;padding:.375rem .5rem;border-bottom:1px solid var(--card-border);vertical-align:top}
th{white-space:nowrap}
td small{color:var(--muted)}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.875rem}
.links{padding-inline-start:1.25rem;margin:0}
.links li{margin:0 0 .25rem}
.meta{color:var(--muted);font-size:.875rem;margin:1.5rem 0 0}
@media (max-width:480px){.card{padding:1.5rem 1rem}.tries button{min-width:0;width:100%}}
`;

/** Inputs of {@link demoPage}. */
export interface DemoPageInput {
  title: string;
  /** The card's HTML below the header: callers escape what they interpolate. */
  content: string;
  /** HTML at the end of the header row (the sign-out button of a signed-in page). */
  headerEnd?: string | undefined;
  /** Shown under the card's content (the multi-instance example names the instance that answered). */
  footer?: string | undefined;
  status?: number | undefined;
  headers?: Record<string, string | string[]> | undefined;
}

/**
 * A demo page as a response, with the login page's look and security headers.
 * @example return demoPage({ title: 'Demo client', content: '<h1>Demo client</h1>' });
 */
export function demoPage(input: DemoPageInput): SentinelResponse {
  const nonce = randomBytes(16).toString('base64');
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHTML(input.title === 'Demo client' ? input.title : `${input.title} – Demo client`)}</title>
<style nonce="${nonce}">${COLORS}${STYLES}</style>
</head>
<body>
<main>
<div class="card">
<header><p class="brand">Demo client</p>${input.headerEnd ?? ''}</header>
${input.content}${input.footer === undefined ? '' : `\n<p class="meta">${escapeHTML(input.footer)}</p>`}
</div>
</main>
</body>
</html>
`;
  return {
    status: input.status ?? 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      // Forms post to this origin only: the service's end_session endpoint is mounted on it too.
      'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
      'x-frame-options': 'DENY',
      'cache-control': 'no-store',
      pragma: 'no-cache',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      ...input.headers,
    },
    body,
  };
}
