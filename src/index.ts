/**
 * sentinel-idp: an OAuth 2.0 identity and token service for Express, Koa, Fastify and fetch runtimes.
 * @packageDocumentation
 */
export { createSentinel } from './sentinel.js';
export type { Sentinel } from './sentinel.js';
export type { BearerResult } from './guard/bearer-check.js';
export type { RegisterAppInput, RegisterAppResult } from './apps/register-app.js';
export type {
  AuthenticatedUser,
  ConsumerIdValidator,
  ErrorContext,
  LoginView,
  ResolvedConfig,
  SentinelOptions,
  UserAuthenticator,
  UserClaims,
  UserClaimsInput,
} from './config.js';
export type { SentinelBody, SentinelRequest, SentinelResponse } from './http/messages.js';
export type { CompleteLoginInput } from './authorize/endpoints/external-login.js';
export type { InteractionView } from './authorize/state/interaction-view.js';
export { clientIP } from './http/client-ip.js';
export { ConfigurationError, isConfigurationError, isOAuthError, OAuthError } from './errors.js';
export type { OAuthErrorCode, OAuthErrorOptions } from './errors.js';
export { BodyTooLargeError } from './http/form-body.js';
export { ClientAbortedError, isClientAborted } from './http/body-failures.js';
export { MemoryStore } from './stores/memory.js';
export type { MemoryStoreOptions } from './stores/memory.js';
export { SecurityStateFullError } from './stores/security-state.js';
export type { Store, SwapEntry } from './stores/store.js';
export { generateClientSecret, hashClientSecret, verifyClientSecret } from './apps/client-secrets.js';
export { MemoryAppStore } from './apps/memory-app-store.js';
export type { App, AppStore, GrantType, TokenEndpointAuthMethod } from './apps/app.js';
export { DEVICE_CODE_GRANT } from './apps/app.js';
export { applyAppPatch } from './apps/app-patch.js';
export type { AppOptions } from './apps/app-options.js';
export { verifyAppSecret } from './apps/client-secrets.js';
export type { AppChange, AppPatch, RetiringSecret } from './apps/app.js';
export type { InitialAccessTokenCheck, RegistrationOptions } from './registration/options.js';
export { generatePrivateJWK } from './keys/signing-keys.js';
export type { ExternalSigner, JWK, SigningAlgorithm } from './keys/signing-keys.js';
export type { KeyRotationOptions } from './keys/keyring/options.js';
export type { RingKeyInfo } from './keys/keyring/describe.js';
export type { AccessTokenClaims } from './token/access-token.js';
export type { VerifyAccessTokenOptions } from './guard/access-token-jwt.js';
export type { DPoPPresentation, ResourceRequest } from './dpop/resource.js';
export type { KeyedAppFields } from './apps/app.js';
export type { SentinelEvent, SentinelEventType } from './events/sentinel-event.js';
export { isParticipantId } from './token/consumer-id.js';
export type { RequireAccessTokenOptions } from './guard/bearer-request.js';
// RFC 9728 (MCP authorization).
export type { ProtectedResourceMetadata, ProtectedResourceMetadataOptions } from './guard/protected-resource-metadata.js';
export { protectedResourceMetadataURL } from './guard/protected-resource-metadata.js';
export { MemoryPasskeys } from './passkeys/memory.js';
export type { PasskeyHooks, StoredPasskey } from './passkeys/hooks.js';
export type { PasskeysOptions } from './passkeys/options.js';
export type { SecondFactorHooks } from './second-factor/hooks.js';
export { BUNDLED_CATALOGUES } from './i18n/catalogues.js';
export type { Messages } from './i18n/messages.js';
export type { I18nOptions } from './i18n/options.js';
export type { SessionInfo, UserAppGrants } from './sessions/session-views.js';
// RFC 8693 token exchange and RFC 7523 JWT bearer: trusted brand issuers and delegation.
export type { TrustedIssuer } from './trusted-issuers/trusted-issuer.js';
export type { DelegationPolicy, DelegationRequest, DelegationSubjectKind } from './config.js';
export type { ActorClaim } from './token/access-token.js';
