/**
 * The `i18n` option: which language a page falls back to, and the host's own catalogues (new languages, or
 * strings of a bundled one replaced). Validated with the rest of the options at startup.
 */
import { z } from 'zod';
import type { Messages } from './messages.js';

/** BCP 47-shaped tags only (letters, digits, hyphens), so a tag can go into `<html lang>` as it is. */
const TAG = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/;

/** Schema of the `i18n` option (used by the options schema). */
export const i18nOptionsSchema = z
  .object({
    defaultLocale: z.string().regex(TAG, 'must be a language tag such as "en" or "pt-BR"').default('en'),
    catalogues: z
      .record(
        z.string().regex(TAG, 'catalogue names must be language tags such as "it" or "pt-BR"'),
        z.custom<Partial<Messages>>(
          (value) =>
            typeof value === 'object' &&
            value !== null &&
            Object.values(value).every((message) => typeof message === 'string' && message.length <= 1000),
          { message: 'must map message names to strings (at most 1000 characters each)' },
        ),
      )
      .default({}),
  })
  .prefault({});

/**
 * The `i18n` option as hosts write it (language tags per RFC 5646; the browser's choice from RFC 9110 §12.5.4).
 *
 * @example
 * createSentinel({ ..., i18n: { defaultLocale: 'es', catalogues: { it: { signIn: 'Accedi' }, en: { signIn: 'Log in' } } } })
 */
export type I18nOptions = z.input<typeof i18nOptionsSchema>;
