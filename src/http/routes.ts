/**
 * The route table: every endpoint of the service (docs/ARCHITECTURE.md), in matching order; paths come from
 * `route-paths.ts`, where the URLs the service hands out are built too.
 */
import { authorizeDenied, tokenDenied } from '../events/denied-events.js';
import { PUBLIC_DOCUMENT_CORS, REVOCATION_CORS, TOKEN_CORS, USERINFO_CORS } from './cors.js';
import { ROUTE_PATHS, type RouteName } from './route-paths.js';
import type { EdgeEntry, RouteDefinition, RouteHandler } from './router.js';
import { OAuthError } from '../errors.js';
import { renderAuthorizationError } from '../authorize/request/authorization-error.js';
import { handleAuthorize } from '../authorize/endpoints/authorize.js';
import { errorPageResponse } from '../authorize/pages/error-response.js';
import { handleLogin } from '../authorize/endpoints/login.js';
import { handleLogout } from '../authorize/endpoints/logout.js';
import { handlePasskeyRegister, handlePasskeyRegisterOptions } from '../passkeys/register.js';
import { handlePasskeyOptions, handlePasskeySignIn } from '../passkeys/sign-in.js';
import { handleTotpStep } from '../second-factor/totp-step.js';
import { handleAppToken } from '../token/app-token.js';
import { handleJWKS } from '../token/jwks.js';
import { handleLive, handleReady } from './health.js';
import { handleMetadata } from '../metadata/server-metadata.js';
import { handlePushedAuthorizationRequest } from '../par/push-endpoint.js';
import { handleAppTokenV1 } from '../token/app-token-v1.js';
import { handleIntrospect } from '../token/introspect.js';
import { handleRevoke } from '../token/revoke.js';
import { handleToken } from '../token/token-endpoint.js';
import { handleEndSession } from '../authorize/endpoints/end-session.js';
import { handleAccountJWKS } from '../token/account-jwks.js';
import { handleUserInfo } from '../userinfo/userinfo.js';
import { handleClientConfiguration } from '../registration/manage.js';
import { handleRegister } from '../registration/register.js';
import { handleRotateSecret } from '../registration/rotate-secret.js';
import { handleDeviceAuthorization } from '../device/authorization-endpoint.js';
import { handleDeviceConfirmation, handleDeviceVerification } from '../device/verification.js';
import { handleAccountPage } from '../account/account-page.js';
import { handleAccountPasskeyOptions } from '../account/account-passkeys.js';

/** All routes, in matching order. */

/**
 * A route of the built-in login page or one of its steps: 404 when the host signs users in on its own page
 * (`login.url`). The interactions then go to that page, and the built-in form must not finish one of them around
 * whatever the host's page enforces (its own second factor, single sign-on, lockout).
 */
function builtInLogin(handler: RouteHandler): RouteHandler {
  return (context, request, params) => {
    if (context.config.login.url !== undefined) {
      return Promise.reject(
        new OAuthError('invalid_request', 'Sign-in happens on the page of the service you came from.', { status: 404 }),
      );
    }
    return handler(context, request, params);
  };
}

export const ROUTES: readonly (RouteDefinition & { name: RouteName })[] = [
  {
    name: 'app-token-v2',
    methods: ['POST'],
    path: ROUTE_PATHS['app-token-v2'],
    handler: (context, request, { accountId }) => handleAppToken(context, request, accountId),
    deniedEvent: tokenDenied,
  },
  {
    name: 'jwks',
    methods: ['GET'],
    headAsGet: true,
    path: ROUTE_PATHS.jwks,
    handler: async (context) => handleJWKS(context),
    cors: PUBLIC_DOCUMENT_CORS,
  },
  {
    name: 'health-live',
    methods: ['GET'],
    headAsGet: true,
    path: ROUTE_PATHS['health-live'],
    handler: () => handleLive(),
    observed: false,
  },
  {
    name: 'health-ready',
    methods: ['GET'],
    headAsGet: true,
    path: ROUTE_PATHS['health-ready'],
    handler: (context) => handleReady(context),
    observed: false,
  },
  {
    name: 'authorize',
    // OpenID Connect Core §3.1.2.1: GET and POST (a form body, read by authorize/request/request-params.ts).
    methods: ['GET', 'POST'],
    path: ROUTE_PATHS.authorize,
    handler: (context, request, { accountId }) => handleAuthorize(context, request, accountId),
    renderError: renderAuthorizationError,
    deniedEvent: authorizeDenied,
  },
  {
    name: 'login',
    methods: ['GET', 'POST'],
    path: ROUTE_PATHS.login,
    handler: builtInLogin((context, request, { accountId }) => handleLogin(context, request, accountId)),
    renderError: errorPageResponse,
  },
  {
    name: 'login-totp',
    methods: ['GET', 'POST'],
    path: ROUTE_PATHS['login-totp'],
    handler: builtInLogin((context, request, { accountId }) => handleTotpStep(context, request, accountId)),
    renderError: errorPageResponse,
  },
  {
    name: 'login-passkey-options',
    methods: ['POST'],
    path: ROUTE_PATHS['login-passkey-options'],
    handler: builtInLogin((context, request, { accountId }) => handlePasskeyOptions(context, request, accountId)),
    renderError: errorPageResponse,
  },
  {
    name: 'login-passkey',
    methods: ['POST'],
    path: ROUTE_PATHS['login-passkey'],
    handler: builtInLogin((context, request, { accountId }) => handlePasskeySignIn(context, request, accountId)),
    renderError: errorPageResponse,
  },
  {
    name: 'login-passkey-register-options',
    methods: ['POST'],
    path: ROUTE_PATHS['login-passkey-register-options'],
    handler: builtInLogin((context, request, { accountId }) => handlePasskeyRegisterOptions(context, request, accountId)),
    renderError: errorPageResponse,
  },
  {
    name: 'login-passkey-register',
    methods: ['GET', 'POST'],
    path: ROUTE_PATHS['login-passkey-register'],
    handler: builtInLogin((context, request, { accountId }) => handlePasskeyRegister(context, request, accountId)),
    renderError: errorPageResponse,
  },
  {
    name: 'logout',
    methods: ['POST'],
    path: ROUTE_PATHS.logout,
    handler: (context, request, { accountId }) => handleLogout(context, request, accountId),
    renderError: errorPageResponse,
  },
  {
    name: 'token',
    methods: ['POST'],
    path: ROUTE_PATHS.token,
    handler: (context, request, { accountId }) => handleToken(context, request, accountId),
    deniedEvent: tokenDenied,
    cors: TOKEN_CORS,
  },
  {
    name: 'par',
    methods: ['POST'],
    path: ROUTE_PATHS.par,
    handler: (context, request, { accountId }) => handlePushedAuthorizationRequest(context, request, accountId),
    deniedEvent: tokenDenied,
    cors: TOKEN_CORS,
  },
  {
    name: 'token-revoke',
    methods: ['POST'],
    path: ROUTE_PATHS['token-revoke'],
    handler: (context, request, { accountId }) => handleRevoke(context, request, accountId),
    deniedEvent: tokenDenied,
    cors: REVOCATION_CORS,
  },
  {
    name: 'token-introspect',
    methods: ['POST'],
    path: ROUTE_PATHS['token-introspect'],
    handler: (context, request, { accountId }) => handleIntrospect(context, request, accountId),
    deniedEvent: tokenDenied,
  },
  {
    name: 'app-token-v1',
    methods: ['POST'],
    path: ROUTE_PATHS['app-token-v1'],
    handler: (context, request, { accountId }) => handleAppTokenV1(context, request, accountId),
    deniedEvent: tokenDenied,
  },
  {
    name: 'register',
    methods: ['POST'],
    path: ROUTE_PATHS.register,
    handler: (context, request, { accountId }) => handleRegister(context, request, accountId),
  },
  {
    name: 'client-configuration',
    methods: ['GET', 'PUT', 'DELETE'],
    path: ROUTE_PATHS['client-configuration'],
    handler: (context, request, params) => handleClientConfiguration(context, request, params),
  },
  {
    name: 'client-secret',
    methods: ['POST'],
    path: ROUTE_PATHS['client-secret'],
    handler: (context, request, params) => handleRotateSecret(context, request, params),
  },
  {
    name: 'account-jwks',
    methods: ['GET'],
    headAsGet: true,
    path: ROUTE_PATHS['account-jwks'],
    handler: (context, _request, { accountId }) => handleAccountJWKS(context, accountId),
    cors: PUBLIC_DOCUMENT_CORS,
  },
  {
    name: 'metadata',
    methods: ['GET'],
    headAsGet: true,
    path: ROUTE_PATHS.metadata,
    absolute: true,
    handler: (context, _request, { accountId }) => handleMetadata(context, accountId),
    cors: PUBLIC_DOCUMENT_CORS,
  },
  {
    name: 'metadata-appended',
    methods: ['GET'],
    headAsGet: true,
    path: ROUTE_PATHS['metadata-appended'],
    handler: (context, _request, { accountId }) => handleMetadata(context, accountId),
    cors: PUBLIC_DOCUMENT_CORS,
  },
  {
    name: 'openid-configuration',
    methods: ['GET'],
    headAsGet: true,
    path: ROUTE_PATHS['openid-configuration'],
    handler: (context, _request, { accountId }) => handleMetadata(context, accountId),
    cors: PUBLIC_DOCUMENT_CORS,
  },
  {
    name: 'userinfo',
    methods: ['GET', 'POST'],
    path: ROUTE_PATHS.userinfo,
    handler: (context, request, { accountId }) => handleUserInfo(context, request, accountId),
    cors: USERINFO_CORS,
  },
  {
    name: 'end-session',
    methods: ['GET', 'POST'],
    path: ROUTE_PATHS['end-session'],
    handler: (context, request, { accountId }) => handleEndSession(context, request, accountId),
    renderError: errorPageResponse,
  },
  {
    name: 'account-jwks-well-known',
    methods: ['GET'],
    headAsGet: true,
    path: ROUTE_PATHS['account-jwks-well-known'],
    handler: (context, _request, { accountId }) => handleAccountJWKS(context, accountId),
    cors: PUBLIC_DOCUMENT_CORS,
  },
  // The device authorization grant (RFC 8628): the endpoint a device asks for its codes, and the verification pages.
  {
    name: 'device-authorization',
    methods: ['POST'],
    path: ROUTE_PATHS['device-authorization'],
    handler: (context, request, { accountId }) => handleDeviceAuthorization(context, request, accountId),
    deniedEvent: tokenDenied,
  },
  {
    name: 'device',
    methods: ['GET', 'POST'],
    path: ROUTE_PATHS.device,
    handler: (context, request, { accountId }) => handleDeviceVerification(context, request, accountId),
    renderError: errorPageResponse,
  },
  {
    name: 'device-confirm',
    methods: ['GET', 'POST'],
    path: ROUTE_PATHS['device-confirm'],
    handler: (context, request, { accountId }) => handleDeviceConfirmation(context, request, accountId),
    renderError: errorPageResponse,
  },
  // The end user's account page (issue #35).
  {
    name: 'account',
    methods: ['GET', 'POST'],
    path: ROUTE_PATHS.account,
    handler: (context, request, { accountId }) => handleAccountPage(context, request, accountId),
    renderError: errorPageResponse,
  },
  {
    name: 'account-passkey-options',
    methods: ['POST'],
    path: ROUTE_PATHS['account-passkey-options'],
    handler: (context, request, { accountId }) => handleAccountPasskeyOptions(context, request, accountId),
    renderError: errorPageResponse,
  },
];

/**
 * `sentinel.completeLogin()`: not an HTTP route (the host calls it from its own login page), but it answers the
 * browser like the login route, so it runs at the same edge with the same renderer.
 */
export const COMPLETE_LOGIN: EdgeEntry = { name: 'complete-login', renderError: errorPageResponse };
