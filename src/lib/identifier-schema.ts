/**
 * The syntax of an identifier the platform hands the service in options and registrations (an account id, an
 * installation's client id): 1–256 characters, none of them a control character, `/`, `?` or `#`, because each one
 * becomes a path segment (`/sentinel/api/account/{accountId}/…`) or a part of a store key. An account id, which
 * also names the account's issuer, must in addition not be a dot segment (`src/lib/account-id.ts`).
 */
import { z } from 'zod';
import { ACCOUNT_ID_RULE, isAccountId } from './account-id.js';

/**
 * The zod schema of a platform identifier, shared by the `apps` and `trustedIssuers` options.
 * @example const clientId = identifierSchema.parse('6f1c0b7e-3d7a-4c1e-9a51-1f0a2b3c4d5e');
 */
export const identifierSchema = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[^\u0000-\u001f\u007f/?#]+$/, 'must not contain control characters, "/", "?" or "#"');

/**
 * The zod schema of an account id: a platform identifier that is not `.` or `..`, which a URL would resolve away.
 * @example const accountId = accountIdSchema.parse('123456');
 */
export const accountIdSchema = identifierSchema.refine(isAccountId, `must be ${ACCOUNT_ID_RULE}`);
