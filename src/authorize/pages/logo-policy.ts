/**
 * Which image sources a page may load: only the configured logo's origin, nothing when no logo is set.
 */
import type { ResolvedConfig } from '../../config.js';
import { hostSource, originSource } from './security-headers.js';

/** A stand-in for the page's origin, to tell a reference that stays on it (a path) from one that names a host. */
const PAGE = 'https://page.invalid';

/**
 * The `img-src` sources for the branding logo: its origin; `'self'` for a path or relative reference, which the
 * browser loads from the page's own host; for a protocol-relative `//cdn.example.com/logo.svg` (or `/\cdn…`, read the
 * same), that host without a scheme, since the browser loads it in the page's scheme. None without a logo.
 *
 * @example
 * logoSources(config.branding) // ['https://cdn.example.com']
 */
export function logoSources(branding: ResolvedConfig['branding']): string[] {
  const { logoUrl } = branding;
  if (logoUrl === undefined) return [];
  if (URL.canParse(logoUrl)) {
    const origin = originSource(logoUrl);
    return origin === null ? [] : [origin];
  }
  if (!URL.canParse(logoUrl, PAGE)) return [];
  const resolved = new URL(logoUrl, PAGE);
  if (resolved.origin === PAGE) return ["'self'"];
  const host = hostSource(resolved);
  return host === null ? [] : [host];
}
