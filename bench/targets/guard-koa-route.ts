/**
 * The guard rows' route for Koa, which has no router of its own: a middleware that matches the path and sets
 * `ctx.params` as @koa/router would, shared by the Koa guards (sentinel-idp and the jose peer) so both pay the same.
 */
import type { Middleware } from 'koa';

const ROUTE = /^\/api\/account\/([^/]+)\/consumer\/([^/]+)\/tokens$/;

/** Runs `guard` then `handler` for GET on the guard rows' route; anything else is Koa's 404. */
export function guardRoute(guard: Middleware, handler: Middleware): Middleware {
  return async (ctx, next) => {
    const found = ctx.method === 'GET' ? ROUTE.exec(ctx.path) : null;
    if (found === null) return next();
    ctx.params = { accountId: decodeURIComponent(found[1] as string), consumerId: decodeURIComponent(found[2] as string) };
    return guard(ctx, () => handler(ctx, next));
  };
}
