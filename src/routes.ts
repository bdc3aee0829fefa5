/**
 * The route table: every endpoint of the service (DESIGN.md "Endpoints").
 */
import type { RouteDefinition } from './router.js';
import { handleAppToken } from './token/app-token.js';
import { handleJWKS } from './token/jwks.js';

/** All routes, in matching order. */
export const ROUTES: readonly RouteDefinition[] = [
  {
    name: 'app-token-v2',
    methods: ['POST'],
    path: '/api/v2/account/{accountId}/app/token',
    handler: (context, request, { accountId }) => handleAppToken(context, request, accountId),
  },
  {
    name: 'jwks',
    methods: ['GET'],
    path: '/well-known/jwks',
    handler: async (context) => handleJWKS(context),
  },
];
