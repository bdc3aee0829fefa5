/**
 * The options of `createSentinel()` as every folder sees them: the resolved configuration object, how it is
 * resolved, and the host's hook types. The schema, its defaults and the checks behind it are filed by concept in
 * `config/`: the zod schema (`schema.ts`), the host's objects it checks (`host-objects.ts`), the checks across fields
 * (`checks.ts`), the resolution (`resolve.ts`) and the problem list of `sentinel-idp config check` (`problems.ts`).
 */
export type { GrantType } from './apps/app.js';
export { configProblems } from './config/problems.js';
export { type ResolvedConfig, resolveConfig } from './config/resolve.js';
export { strictOptionsSchema } from './config/schema.js';
export type {
  AuthenticatedUser,
  ConsumerIdValidator,
  DelegationPolicy,
  DelegationRequest,
  DelegationSubjectKind,
  ErrorContext,
  LoginView,
  UserAuthenticator,
  UserClaims,
  UserClaimsInput,
} from './hooks.js';
export type { SentinelOptions } from './options.js';
