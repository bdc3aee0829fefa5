/**
 * The route table: every endpoint of the service (DESIGN.md "Endpoints").
 */
import { authorizeDenied, tokenDenied } from './denied-events.js';
import type { RouteDefinition } from './router.js';
import { renderAuthorizationError } from './authorize/authorization-error.js';
import { handleAuthorize } from './authorize/authorize.js';
import { renderErrorPage } from './authorize/error-page.js';
import { handleLogin } from './authorize/login.js';
import { handleLogout } from './authorize/logout.js';
import { handleAppToken } from './token/app-token.js';
import { handleJWKS } from './token/jwks.js';
import { handleMetadata } from './metadata.js';
import { handlePushedAuthorizationRequest } from './par/push-endpoint.js';
import { handleAppTokenV1 } from './token/app-token-v1.js';
import { handleIntrospect } from './token/introspect.js';
import { handleRevoke } from './token/revoke.js';
import { handleToken } from './token/token-endpoint.js';

/** All routes, in matching order. */
export const ROUTES: readonly RouteDefinition[] = [
  {
    name: 'app-token-v2',
    methods: ['POST'],
    path: '/api/v2/account/{accountId}/app/token',
    handler: (context, request, { accountId }) => handleAppToken(context, request, accountId),
    deniedEvent: tokenDenied,
  },
  {
    name: 'jwks',
    methods: ['GET'],
    path: '/well-known/jwks',
    handler: async (context) => handleJWKS(context),
  },
  {
    name: 'authorize',
    methods: ['GET'],
    path: '/api/account/{accountId}/authorize',
    handler: (context, request, { accountId }) => handleAuthorize(context, request, accountId),
    renderError: renderAuthorizationError,
    deniedEvent: authorizeDenied,
  },
  {
    name: 'login',
    methods: ['GET', 'POST'],
    path: '/api/account/{accountId}/login',
    handler: (context, request, { accountId }) => handleLogin(context, request, accountId),
    renderError: renderErrorPage,
  },
  {
    name: 'logout',
    methods: ['POST'],
    path: '/api/account/{accountId}/logout',
    handler: (context, request, { accountId }) => handleLogout(context, request, accountId),
    renderError: renderErrorPage,
  },
  {
    name: 'token',
    methods: ['POST'],
    path: '/api/account/{accountId}/token',
    handler: (context, request, { accountId }) => handleToken(context, request, accountId),
    deniedEvent: tokenDenied,
  },
  {
    name: 'par',
    methods: ['POST'],
    path: '/api/account/{accountId}/par',
    handler: (context, request, { accountId }) => handlePushedAuthorizationRequest(context, request, accountId),
    deniedEvent: tokenDenied,
  },
  {
    name: 'token-revoke',
    methods: ['POST'],
    path: '/api/account/{accountId}/token/revoke',
    handler: (context, request, { accountId }) => handleRevoke(context, request, accountId),
    deniedEvent: tokenDenied,
  },
  {
    name: 'token-introspect',
    methods: ['POST'],
    path: '/api/account/{accountId}/token/introspect',
    handler: (context, request, { accountId }) => handleIntrospect(context, request, accountId),
    deniedEvent: tokenDenied,
  },
  {
    name: 'app-token-v1',
    methods: ['POST'],
    path: '/api/account/{accountId}/app/token',
    handler: (context, request, { accountId }) => handleAppTokenV1(context, request, accountId),
    deniedEvent: tokenDenied,
  },
  {
    name: 'metadata',
    methods: ['GET'],
    path: '/.well-known/oauth-authorization-server{basePath}/api/account/{accountId}',
    absolute: true,
    handler: (context, _request, { accountId }) => handleMetadata(context, accountId),
  },
  {
    name: 'metadata-appended',
    methods: ['GET'],
    path: '/api/account/{accountId}/.well-known/oauth-authorization-server',
    handler: (context, _request, { accountId }) => handleMetadata(context, accountId),
  },
  {
    name: 'openid-configuration',
    methods: ['GET'],
    path: '/api/account/{accountId}/.well-known/openid-configuration',
    handler: (context, _request, { accountId }) => handleMetadata(context, accountId),
  },
];
