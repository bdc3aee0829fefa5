/**
 * The console's `i18n` option is checked at startup like the service's own: a tag that is no language tag, a message
 * name the console does not have, or a value that is not text is a ConfigurationError, rather than every page of
 * that language failing when it is shown. A message given as `undefined` is left out: the page shows English.
 */
import { describe, expect, it } from 'vitest';
import { createConsole } from '../src/console/index.js';
import type { ConsoleMessages } from '../src/console/messages/console-messages.js';
import { ConfigurationError } from '../src/errors.js';
import { eventTaps } from '../src/events/event-taps.js';
import { consoleRequest, operatorCookie } from './helpers/console-session.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';

type Catalogues = Readonly<Record<string, Partial<ConsoleMessages>>>;

const build = (i18n: { defaultLocale?: string; catalogues?: Catalogues }) =>
  createConsole(makeSentinel(), { authorize: () => 'admin', i18n });

describe('console: the i18n option', () => {
  it('shows English for a message given as undefined, on every page of that language', async () => {
    const sentinel = makeSentinel();
    const catalogues = { de: { navApps: undefined, navKeys: 'Schlüssel' } } as unknown as Catalogues;
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin', i18n: { catalogues } });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const request = consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie });
    const page = await operatorConsole.handle({ ...request, headers: { ...request.headers, 'accept-language': 'de' } });
    expect(page?.status).toBe(200);
    expect(page?.body).toContain('<html lang="de">');
    expect(page?.body).toContain('>Apps</a>');
    expect(page?.body).toContain('>Schlüssel</a>');
  });

  it('refuses at startup a message that is not text, an unknown message name, and tags that are no language tags', () => {
    const cases: { defaultLocale?: string; catalogues?: Catalogues }[] = [
      { catalogues: { de: { navApps: 5 } } as unknown as Catalogues },
      { catalogues: { de: { navApps: null } } as unknown as Catalogues },
      { catalogues: { de: { navAps: 'Anwendungen' } } as unknown as Catalogues },
      { catalogues: { 'de"><b>': { navApps: 'Anwendungen' } } },
      { catalogues: { de: { navApps: 'x'.repeat(1001) } } },
      { defaultLocale: 'de_DE' },
    ];
    for (const i18n of cases) expect(() => build(i18n), JSON.stringify(i18n)).toThrow(ConfigurationError);
    // Shapes a host's configuration file can produce: refused as options, not a TypeError nor quietly taken.
    const shapes: unknown[] = [null, 'fr', { catalogues: null }, { catalogues: [] }, { catalogues: { de: [] } }];
    for (const i18n of shapes) {
      const sentinel = makeSentinel();
      expect(() => createConsole(sentinel, { authorize: () => 'admin', i18n } as never), JSON.stringify(i18n)).toThrow(ConfigurationError);
      // Refused before the console's in-memory audit log subscribed to the service's events.
      expect(eventTaps(sentinel.config), JSON.stringify(i18n)).toBeUndefined();
    }
    expect(() => createConsole(makeSentinel(), { authorize: () => 'admin', i18n: { defaultLanguage: 'fr' } as never })).toThrow(
      ConfigurationError,
    );
    expect(() => build({ defaultLocale: 'pt-BR', catalogues: { 'pt-BR': { navApps: 'Aplicativos' } } })).not.toThrow();
  });

  it('matches defaultLocale as a browser preference, and refuses one no console catalogue shows', async () => {
    const sentinel = makeSentinel();
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const page = async (i18n: { defaultLocale?: string; catalogues?: Catalogues }, acceptLanguage?: string) => {
      const operatorConsole = createConsole(sentinel, { authorize: () => 'admin', i18n });
      const request = consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie });
      const headers = acceptLanguage === undefined ? request.headers : { ...request.headers, 'accept-language': acceptLanguage };
      return (await operatorConsole.handle({ ...request, headers }))?.body ?? '';
    };
    const es = { es: { navApps: 'Aplicaciones' } };
    expect(await page({ defaultLocale: 'fr-CA' })).toContain('<html lang="fr">');
    expect(await page({ defaultLocale: 'es-MX', catalogues: es })).toContain('>Aplicaciones</a>');
    expect(await page({ defaultLocale: 'EN-gb' }, 'it')).toContain('<html lang="en">');
    // Accept-Language as the service's pages take it: `pt` and `pt-PT` fall to a host's `pt-BR`.
    const pt = { 'pt-BR': { navApps: 'Aplicativos' } };
    expect(await page({ catalogues: pt }, 'pt-PT, en;q=0.5')).toContain('<html lang="pt-BR">');
    expect(await page({ catalogues: pt }, 'pt')).toContain('>Aplicativos</a>');
    for (const i18n of [{ defaultLocale: 'it' }, { defaultLocale: 'de', catalogues: es }]) {
      expect(() => build(i18n), JSON.stringify(i18n)).toThrow(
        new ConfigurationError(
          'console.i18n.defaultLocale',
          `no catalogue shows "${i18n.defaultLocale}": add it to console.i18n.catalogues or use a bundled language (en, fr)`,
        ),
      );
    }
  });

  it('writes console pages of right-to-left tags right to left, by the service rule', async () => {
    const sentinel = makeSentinel();
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const catalogues = { ar: { navApps: 'التطبيقات' }, he: { navApps: 'יישומים' }, 'ku-Arab': { navApps: 'ئەپەکان' } };
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin', i18n: { defaultLocale: 'he-IL', catalogues } });
    const page = async (acceptLanguage?: string) => {
      const request = consoleRequest('GET', `/console/${ACCOUNT}/apps`, { cookie });
      const headers = acceptLanguage === undefined ? request.headers : { ...request.headers, 'accept-language': acceptLanguage };
      return (await operatorConsole.handle({ ...request, headers }))?.body ?? '';
    };
    expect(await page('ar-EG')).toContain('<html lang="ar" dir="rtl">');
    expect(await page('ku-Arab')).toContain('<html lang="ku-Arab" dir="rtl">');
    expect(await page()).toContain('<html lang="he" dir="rtl">');
    expect(await page('fr')).toContain('<html lang="fr">');
  });
});
