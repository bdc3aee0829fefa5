/**
 * Which image sources a page may load: only the configured logo's origin, nothing when no logo is set.
 */
import type { ResolvedConfig } from '../../config.js';
import { originSource } from './security-headers.js';

/**
 * The `img-src` sources for the branding logo: its origin, `'self'` for a path on this host, none without a logo.
 *
 * @example
 * logoSources(config.branding) // ['https://cdn.example.com']
 */
export function logoSources(branding: ResolvedConfig['branding']): string[] {
  if (branding.logoUrl === undefined) return [];
  const origin = originSource(branding.logoUrl);
  if (origin !== null) return [origin];
  return branding.logoUrl.startsWith('/') ? ["'self'"] : [];
}
