/**
 * The router finds routes by lookup (src/http/router.ts) instead of trying every route's expression in turn. Its
 * answer must be the scan's: the first route of the table whose `^…$` expression matches, with the same parameters,
 * and the same 405 `Allow`. This compares the two over every path of the table, variants of each (encoded, empty
 * and slash-bearing account segments, trailing slashes, other base paths) and a table where an exact path, an
 * account path and a `{clientId}` path overlap, in both orders.
 */
import { describe, expect, it } from 'vitest';
import { ROUTE_PATHS } from '../src/http/route-paths.js';
import { createRouter, type RouteDefinition } from '../src/http/router.js';
import { ROUTES } from '../src/http/routes.js';
import type { SentinelRequest } from '../src/index.js';

/** The table scan the router replaced, as the reference. */
function scanRouter(definitions: readonly RouteDefinition[], basePath: string) {
  const compiled = definitions.map((definition) => {
    const full = definition.absolute === true ? definition.path.replace('{basePath}', basePath) : `${basePath}${definition.path}`;
    const source = full
      .split(/(\{accountId\}|\{clientId\})/)
      .map((piece) => (piece === '{accountId}' || piece === '{clientId}' ? '([^/]+)' : piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    return { definition, pattern: new RegExp(`^${source}$`), hasClientId: full.includes('{clientId}') };
  });
  const decode = (segment: string): string => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  };
  return (path: string, method: string) => {
    if (!path.startsWith(`${basePath}/`) && !path.startsWith('/.well-known/')) return null;
    for (const { definition, pattern, hasClientId } of compiled) {
      const found = pattern.exec(path);
      if (found === null) continue;
      const params: Record<string, string> = { accountId: decode(found[1] ?? '') };
      if (hasClientId) params.clientId = decode(found[2] ?? '');
      // HEAD is GET only where GET changes nothing (the route says so).
      const headAsGet = definition.headAsGet === true && definition.methods.includes('GET');
      const verb = method === 'HEAD' && headAsGet ? 'GET' : method;
      const allowed = definition.methods.includes(verb);
      const allow = [...definition.methods, ...(headAsGet ? ['HEAD'] : []), ...(definition.cors === undefined ? [] : ['OPTIONS'])].join(
        ', ',
      );
      return { name: definition.name, params, allowed, ...(allowed ? {} : { allow }) };
    }
    return null;
  };
}

const request = (path: string, method: string): SentinelRequest =>
  ({ method, path, query: new URLSearchParams(), headers: {} }) as unknown as SentinelRequest;

function routed(match: ReturnType<ReturnType<typeof createRouter>>) {
  if (match === null) return null;
  return {
    name: match.route.name,
    params: { ...match.params },
    allowed: match.allowed,
    ...(match.allowed ? {} : { allow: match.allow }),
  };
}

/** Every path of the table with accounts and clients filled in several ways, and near misses of each. */
function pathsOf(basePath: string): string[] {
  const accounts = ['123456', 'acme%20corp', '%E2%82%AC', '%zz', 'a.b', ''];
  const paths = new Set<string>(['/', basePath, `${basePath}/`, `${basePath}/api`, '/.well-known/', '/.well-known/x', '/elsewhere/token']);
  for (const template of Object.values(ROUTE_PATHS) as string[]) {
    const absolute = template.startsWith('/.well-known/') ? template.replace('{basePath}', basePath) : `${basePath}${template}`;
    for (const account of accounts) {
      for (const client of ['c-1', 'a%2Fb', '']) {
        const path = absolute.replace('{accountId}', account).replace('{clientId}', client);
        paths.add(path);
        paths.add(`${path}/`);
        paths.add(`${path}x`);
        paths.add(path.replace('/api/', '/api/x/'));
        paths.add(path.replace(account === '' ? '//' : account, `${account}/extra`));
      }
    }
  }
  return [...paths];
}

describe('router: lookups answer as the table scan did', () => {
  for (const basePath of ['/sentinel', '/auth/v1', '']) {
    it(`every route and its near misses, base path "${basePath}"`, () => {
      const router = createRouter(ROUTES, basePath);
      const reference = scanRouter(ROUTES, basePath);
      let matched = 0;
      for (const path of pathsOf(basePath)) {
        for (const method of ['GET', 'POST', 'HEAD', 'DELETE', 'OPTIONS']) {
          const expected = reference(path, method);
          if (expected !== null) matched++;
          expect(routed(router(request(path, method))), `${method} ${path}`).toEqual(expected);
        }
      }
      // The comparison covered matches, not only misses.
      expect(matched).toBeGreaterThan(100);
    });
  }

  it('overlapping routes: the earliest in the table wins, whichever kind it is', () => {
    const handler = (() => Promise.reject(new Error('not called'))) as RouteDefinition['handler'];
    const exactFirst: RouteDefinition[] = [
      { name: 'exact', methods: ['GET'], path: '/api/account/fixed/x', handler },
      { name: 'account', methods: ['POST'], path: '/api/account/{accountId}/x', handler },
      { name: 'client', methods: ['GET'], path: '/api/account/{accountId}/{clientId}', handler },
    ];
    const orders = [
      exactFirst,
      [...exactFirst].reverse(),
      [exactFirst[1], exactFirst[2], exactFirst[0]],
      [exactFirst[2], exactFirst[0], exactFirst[1]],
    ];
    for (const table of orders as RouteDefinition[][]) {
      const router = createRouter(table, '/s');
      const reference = scanRouter(table, '/s');
      for (const path of ['/s/api/account/fixed/x', '/s/api/account/other/x', '/s/api/account/other/y', '/s/api/account/fixed/y']) {
        for (const method of ['GET', 'POST']) {
          expect(routed(router(request(path, method))), `${table.map((r) => r.name).join(',')}: ${method} ${path}`).toEqual(
            reference(path, method),
          );
        }
      }
    }
  });
});
