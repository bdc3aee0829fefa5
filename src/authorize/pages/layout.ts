/**
 * The shared frame of the service's pages (login, error, signed out): a centred card on a quiet background, the
 * system font stack, the branding as CSS custom properties. Pages work with JavaScript disabled; the only script
 * is the optional passkey button, allowed by a per-response nonce, and every other page's CSP forbids scripts.
 */
import type { ResolvedConfig } from '../../config.js';
import { escapeHTML } from './escape-html.js';

/**
 * Default colours, overridable one by one with `branding.colors` (`{ brand: '#7c3aed' }` sets `--brand`).
 * Every text/background pair meets WCAG AA (4.5:1) with these values.
 */
export const DEFAULT_COLORS: Readonly<Record<string, string>> = Object.freeze({
  brand: '#1d4ed8',
  'brand-text': '#ffffff',
  background: '#f3f4f6',
  surface: '#ffffff',
  text: '#111827',
  muted: '#4b5563',
  /** Input and secondary-button borders: 4.8:1 on white (WCAG 1.4.11 asks 3:1 for controls). */
  border: '#6b7280',
  /** The card's outline is decoration, so it may be light. */
  'card-border': '#e5e7eb',
  error: '#b91c1c',
  'error-background': '#fef2f2',
  /** Focus ring: the brand blue, 6.7:1 on the white card (WCAG 2.4.11 asks 3:1); its 2 px offset keeps it visible around the blue button. */
  focus: '#1d4ed8',
});

/** The options' default `branding.productName`. */
const DEFAULT_PRODUCT_NAME = 'Sign in';

// The card wraps with overflow-wrap:anywhere: a long unhyphenated client id (the app's name when it has none) or
// account id breaks where it must instead of scrolling a phone sideways, while ordinary words stay whole
// (word-break:break-all split "application" across lines on the error page). Whatever comes last in the card
// drops its bottom margin, so a page that ends with a paragraph (signed out) keeps equal padding top and bottom.
const STYLES = `
*,*::before,*::after{box-sizing:border-box}
html{font-size:100%}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;padding:1rem;
  background:var(--background);color:var(--text);
  font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif;line-height:1.5}
main{width:100%;max-width:26rem}
.card{background:var(--surface);border:1px solid var(--card-border);border-radius:.75rem;padding:2rem 1.5rem;
  box-shadow:0 10px 25px -12px rgba(0,0,0,.25);overflow-wrap:anywhere}
.card>:last-child{margin-bottom:0}
.brand{display:flex;align-items:center;gap:.75rem;margin:0 0 1.5rem}
.brand img{max-height:2.5rem;max-width:8rem}
.brand span{font-weight:600;font-size:1.125rem}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .5rem}
.lead{color:var(--muted);margin:0 0 1.5rem}
.lead strong{color:var(--text)}
label{display:block;font-weight:600;margin:0 0 .25rem}
input{display:block;width:100%;font:inherit;padding:.625rem .75rem;margin:0 0 1rem;color:var(--text);
  background:var(--surface);border:1px solid var(--border);border-radius:.5rem}
input[aria-invalid="true"]{border-color:var(--error)}
input:focus,button:focus,a:focus{outline:3px solid var(--focus);outline-offset:2px}
.error{background:var(--error-background);color:var(--error);border:1px solid var(--error);border-radius:.5rem;
  padding:.75rem;margin:0 0 1rem;font-weight:600}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin-top:.5rem}
button{font:inherit;font-weight:600;padding:.625rem 1.25rem;border-radius:.5rem;cursor:pointer;flex:1 1 8rem}
.primary{background:var(--brand);color:var(--brand-text);border:1px solid var(--brand)}
.secondary{background:var(--surface);color:var(--text);border:1px solid var(--border)}
.meta{color:var(--muted);font-size:.875rem;margin:1.5rem 0 0}
.divider{display:flex;align-items:center;gap:.75rem;color:var(--muted);margin:1.25rem 0}
.divider::before,.divider::after{content:"";flex:1;border-top:1px solid var(--card-border)}
.passkey{width:100%;background:var(--surface);color:var(--text);border:1px solid var(--border)}
details{margin:1.25rem 0 0}
summary{cursor:pointer;color:var(--brand);font-weight:600}
summary:focus{outline:3px solid var(--focus);outline-offset:2px}
[hidden]{display:none!important}
@media (max-width:400px){.card{padding:1.5rem 1rem}}
`;

/** The `:root` custom properties: defaults, then the configured branding colours. */
function colorVariables(colors: Readonly<Record<string, string>>): string {
  const merged = { ...DEFAULT_COLORS, ...colors };
  // Names and values are restricted by the options schema (letters, digits, #, (), %, commas, dots), so they cannot
  // close the declaration block.
  return `:root{${Object.entries(merged)
    .map(([name, value]) => `--${name}:${value}`)
    .join(';')}}`;
}

/** Inputs of {@link renderPageHtml}. */
export interface PageInput {
  title: string;
  /** The card's inner HTML: callers escape what they interpolate. */
  content: string;
  styleNonce: string;
  branding: ResolvedConfig['branding'];
  /** The page language for `<html lang>`; English when omitted. */
  lang?: string | undefined;
  /** Writing direction; `rtl` mirrors the layout (the styles use only direction-neutral properties). */
  dir?: 'ltr' | 'rtl' | undefined;
  /** A page script and the nonce the CSP allows it by (the passkey button); most pages have none. */
  script?: { nonce: string; source: string } | undefined;
  /** Styles added after the shared ones, under the same nonce (the operator console's wider card and tables). */
  styles?: string | undefined;
}

/**
 * A complete HTML document around `content`.
 *
 * @example
 * renderPageHtml({ title: 'Signed out', content: '<h1>Signed out</h1>', styleNonce, branding: config.branding })
 */
export function renderPageHtml(input: PageInput): string {
  const { branding } = input;
  const logo = branding.logoUrl === undefined ? '' : `<img src="${escapeHTML(branding.logoUrl)}" alt="">`;
  // The options default productName to "Sign in": shown as a brand next to a "Sign in" heading it only repeats.
  const unbranded = branding.logoUrl === undefined && branding.productName === DEFAULT_PRODUCT_NAME;
  const brand = unbranded ? '' : `<p class="brand">${logo}<span>${escapeHTML(branding.productName)}</span></p>\n`;
  const title = unbranded || input.title === branding.productName ? input.title : `${input.title} – ${branding.productName}`;
  return `<!doctype html>
<html lang="${escapeHTML(input.lang ?? 'en')}"${input.dir === 'rtl' ? ' dir="rtl"' : ''}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHTML(title)}</title>
<style nonce="${escapeHTML(input.styleNonce)}">${colorVariables(branding.colors)}${STYLES}${input.styles ?? ''}</style>
</head>
<body>
<main>
<div class="card">
${brand}${input.content}
</div>
</main>
${input.script === undefined ? '' : `<script nonce="${escapeHTML(input.script.nonce)}">${input.script.source}</script>\n`}</body>
</html>
`;
}
