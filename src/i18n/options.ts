/**
 * The `i18n` option: which language a page falls back to, and the host's own catalogues (new languages, or
 * strings of a bundled one replaced). Validated with the rest of the options at startup.
 */
import { z } from 'zod';
import { BUNDLED_CATALOGUES } from './catalogues.js';
import { en } from './en.js';
import { type Messages, placeholdersOf } from './messages.js';
import { matchTag } from './match-tag.js';

/** BCP 47-shaped tags only (letters, digits, hyphens), so a tag can go into `<html lang>` as it is. */
const TAG = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/;

/** The longest message a host may give: a page is not a place for essays, and the page stays bounded. */
const MAX_MESSAGE = 1000;

// `.partial()` below lets a message be `undefined` (an i18n library's answer for a key it lacks): that one keeps the
// bundled or English text (catalogues.ts). Anything else that is not text is refused here, at startup, rather than
// making every page of that language throw when it is shown.
// A message must keep the English one's placeholders (messages.ts, placeholdersOf): a `continueTo` or
// `deviceConfirmAsks` without `{app}` would ask the user to sign in or allow a device without saying for which app.
const MESSAGE_SHAPE = Object.fromEntries(
  (Object.entries(en) as [keyof Messages, string][]).map(([name, english]) => {
    const wanted = placeholdersOf(english);
    const shown = wanted.length === 0 ? 'no placeholder' : `exactly the placeholders ${wanted.join(' ')}`;
    return [
      name,
      z
        .string({ error: `must be text of at most ${MAX_MESSAGE} characters (or undefined, for the bundled text)` })
        .max(MAX_MESSAGE, `must be at most ${MAX_MESSAGE} characters`)
        .refine((text) => placeholdersOf(text).join(' ') === wanted.join(' '), `must have ${shown}, as the English message`),
    ];
  }),
) as Record<keyof Messages, z.ZodString>;

/**
 * A default language no catalogue shows would quietly be English: refused instead, as a misspelled option is. It is
 * found as a browser's preference is (`es-MX` shows `es`, `en-US` shows `en`).
 */
function refuseDefaultWithoutCatalogue(
  i18n: { defaultLocale: string; catalogues: Record<string, unknown> },
  context: z.RefinementCtx,
): void {
  if (!TAG.test(i18n.defaultLocale)) return;
  const tags = new Set([...Object.keys(BUNDLED_CATALOGUES), ...Object.keys(i18n.catalogues)].map((tag) => tag.toLowerCase()));
  if (matchTag(tags, i18n.defaultLocale) !== null) return;
  context.addIssue({
    code: 'custom',
    path: ['defaultLocale'],
    message: `no catalogue shows "${i18n.defaultLocale}": add it to i18n.catalogues or use a bundled language (${Object.keys(BUNDLED_CATALOGUES).join(', ')})`,
  });
}

/** Schema of the `i18n` option (used by the options schema). */
export const i18nOptionsSchema = z
  .object({
    defaultLocale: z.string().regex(TAG, 'must be a language tag such as "en" or "pt-BR"').default('en'),
    catalogues: z
      .record(
        z.string().regex(TAG, 'catalogue names must be language tags such as "it" or "pt-BR"'),
        // An object of the message names: the options schema makes it strict, so a misspelled name is refused.
        z.object(MESSAGE_SHAPE).partial() as unknown as z.ZodType<Partial<Messages>, Partial<Messages>>,
      )
      .default({}),
  })
  .superRefine(refuseDefaultWithoutCatalogue)
  .prefault({});

/**
 * The `i18n` option as hosts write it (language tags per RFC 5646; the browser's choice from RFC 9110 §12.5.4).
 *
 * @example
 * createSentinel({ ..., i18n: { defaultLocale: 'es', catalogues: { it: { signIn: 'Accedi' }, en: { signIn: 'Log in' } } } })
 */
export type I18nOptions = z.input<typeof i18nOptionsSchema>;
