/**
 * The syntax of an identifier the platform hands the service in options and registrations (an account id, an
 * installation's client id): 1–256 characters, none of them a control character, `/`, `?` or `#`, because each one
 * becomes a path segment (`/sentinel/api/account/{accountId}/…`) or a part of a store key.
 */
import { z } from 'zod';

/**
 * The zod schema of a platform identifier, shared by the `apps` and `trustedIssuers` options.
 * @example const accountId = identifierSchema.parse('123456');
 */
export const identifierSchema = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[^\u0000-\u001f\u007f/?#]+$/, 'must not contain control characters, "/", "?" or "#"');
