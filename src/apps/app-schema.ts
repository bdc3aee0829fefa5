/**
 * One entry of the `apps` option as the schema reads it, and the checks it passes after the schema: the same for an
 * app configured at startup (src/config/) and one registered at run time (`registerApp()`, the console), so the
 * two cannot differ.
 */
import { z } from 'zod';
import { accountIdSchema, identifierSchema as identifier } from '../lib/identifier-schema.js';
import { keyedAppShape } from '../client-assertion/options.js';
import { ConfigurationError } from '../errors.js';
import { parseOptions, strictSchema, throwProblems } from '../lib/strict-options.js';
import type { App } from './app.js';
import { appFromOptions, type AppOptions } from './app-options.js';
import { assertValidApp, MAX_APP_NAME_LENGTH, MAX_DEFAULT_MAX_AGE } from './app-validation.js';

const grantTypeSchema = z.enum([
  'authorization_code',
  'client_credentials',
  'refresh_token',
  'urn:ietf:params:oauth:grant-type:device_code',
  // RFC 8693 token exchange and RFC 7523 JWT bearer (docs/guides/authenticated-consumers-and-delegation.md)
  'urn:ietf:params:oauth:grant-type:token-exchange',
  'urn:ietf:params:oauth:grant-type:jwt-bearer',
]);

/** An `apps` entry as the options schema reads it (src/config/schema.ts). */
export const appSchema = z.object({
  accountId: accountIdSchema,
  clientId: identifier,
  clientSecret: z.string().min(1).optional(),
  clientSecretHash: z.string().optional(),
  redirectUris: z.array(z.string()).optional(),
  grantTypes: z.array(grantTypeSchema).min(1).optional(),
  tokenEndpointAuthMethod: z.enum(['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt']).optional(),
  name: z.string().max(MAX_APP_NAME_LENGTH).optional(),
  scope: z.string().optional(),
  idTokenSignedResponseAlg: z.enum(['ES256', 'ES384', 'RS256', 'PS256', 'EdDSA']).optional(),
  postLogoutRedirectUris: z.array(z.string()).optional(),
  backchannelLogoutUri: z.string().optional(),
  backchannelLogoutSessionRequired: z.boolean().optional(),
  defaultMaxAge: z.number().int().positive().max(MAX_DEFAULT_MAX_AGE).optional(),
  ...keyedAppShape,
  // RFC 8707 resource indicators (the MCP authorization of issue #33).
  resources: z.array(z.string()).optional(),
});

// Strict at every depth, as the options are (src/lib/strict-options.ts): a misspelled field is refused, not dropped.
const strictAppSchema = strictSchema(appSchema);

/** The checks an app passes after its schema: one secret form, then {@link assertValidApp} on its defaults. */
export function checkedApp(entry: z.infer<typeof appSchema>, field: string): App {
  if (entry.clientSecret !== undefined && entry.clientSecretHash !== undefined) {
    throw new ConfigurationError(`${field}.clientSecret`, 'give clientSecret or clientSecretHash, not both');
  }
  const app = appFromOptions(entry);
  assertValidApp(app, field);
  return app;
}

/**
 * Validates one app and fills in its defaults exactly as an `apps` entry is: `registerApp()` uses it, so an app
 * registered at run time and one configured at startup cannot differ.
 * @throws ConfigurationError naming the wrong field under `field`.
 */
export function appFromInput(input: AppOptions, field: string): App {
  const result = parseOptions(strictAppSchema, input, field);
  if (!result.success) throwProblems(result.problems);
  return checkedApp(result.data, field);
}
