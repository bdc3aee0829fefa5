/**
 * Resource indicators (RFC 8707 §2): the URI of a protected resource a token is meant for. The same syntax check
 * serves an app's `resources`, the service's `defaultResources`, a registration request and every `resource`
 * parameter, so a URI an operator could not register can never be asked for either.
 */
import { parseAbsoluteURI, webURIProblem } from './uri-syntax.js';

/** Longest resource URI accepted (the cap of registered redirect URIs): a token's `aud` carries it. */
export const MAX_RESOURCE_URI_LENGTH = 2000;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Why `uri` cannot be a resource indicator, or `null` when it can: RFC 8707 §2 wants an absolute URI without a
 * fragment. Only `https` (and `http` for the loopback development hosts) are accepted: a resource server is reached
 * over HTTP, and a token bound to a scheme no server answers on is a mistake worth naming.
 *
 * @example
 * resourceURIProblem('https://mcp.example.com/mcp') // null
 * resourceURIProblem('https://mcp.example.com/#x') // 'must not contain a fragment'
 */
export function resourceURIProblem(uri: string): string | null {
  if (uri.length > MAX_RESOURCE_URI_LENGTH) return `must be at most ${MAX_RESOURCE_URI_LENGTH} characters`;
  const parts = parseAbsoluteURI(uri);
  if (typeof parts === 'string') return parts;
  if (parts.hasFragment) return 'must not contain a fragment';
  if (parts.scheme !== 'https' && parts.scheme !== 'http') return 'must use https (http is allowed only for loopback hosts)';
  const problem = webURIProblem(uri, parts);
  if (problem !== null || parts.scheme === 'https') return problem;
  return LOOPBACK_HOSTS.has(parts.authority?.host.toLowerCase() ?? '') ? null : 'must use https (http is allowed only for loopback hosts)';
}
