/**
 * The pages' languages: every bundled catalogue complete, the choice by `ui_locales` (OpenID Connect Core
 * §3.1.2.1), then `Accept-Language` (RFC 9110 §12.5.4), then the `i18n.defaultLocale` option; host catalogues;
 * `<html lang>` and `dir="rtl"`; translated messages on the login, error, 429 and signed-out pages.
 */
import { describe, expect, it } from 'vitest';
import { generate, generateSecret } from 'otplib';
import { BUNDLED_CATALOGUES, ConfigurationError, MemoryPasskeys, MemoryStore, type Messages, type SentinelResponse } from '../src/index.js';
import { catalogueSet } from '../src/i18n/catalogues.js';
import { en } from '../src/i18n/en.js';
import { chooseLocale, parseAcceptLanguage } from '../src/i18n/negotiate.js';
import {
  ACCOUNT_PATH,
  AUTHORIZE_PATH,
  authorizeQuery,
  call,
  csrfOf,
  LOGIN_PATH,
  openLogin,
  postForm,
  postLogin,
  startInteraction,
  stepCookie,
} from './helpers/direct-flow.js';
import { makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { signInWithSession } from './helpers/logout-flow.js';

const EXPECTED = ['en', 'es', 'pt-BR', 'fr', 'de', 'ja', 'ar'];

async function loginPage(sentinel: ReturnType<typeof makeSentinel>, query: Record<string, string>, acceptLanguage?: string) {
  const { interaction } = await startInteraction(sentinel, authorizeQuery(query));
  return call(sentinel, {
    path: LOGIN_PATH,
    query: new URLSearchParams({ interaction }),
    headers: acceptLanguage === undefined ? {} : { 'accept-language': acceptLanguage },
  });
}

describe('message catalogues', () => {
  it('bundles the seven languages, each with every message, none empty, placeholders kept', () => {
    expect(Object.keys(BUNDLED_CATALOGUES)).toEqual(EXPECTED);
    for (const [tag, messages] of Object.entries(BUNDLED_CATALOGUES)) {
      expect(Object.keys(messages).sort(), tag).toEqual(Object.keys(en).sort());
      // An untranslated copy of English would pass the other checks; a few words may coincide, not most.
      const same = Object.entries(messages).filter(([key, value]) => value === en[key as keyof Messages]).length;
      if (tag !== 'en') expect(same, `${tag} messages identical to English`).toBeLessThan(3);
      for (const [key, value] of Object.entries(messages)) {
        expect(value.trim(), `${tag}.${key}`).not.toBe('');
        const placeholders = (text: string) => (text.match(/\{[a-z]+\}/g) ?? []).sort();
        expect(placeholders(value), `${tag}.${key} placeholders`).toEqual(placeholders(en[key as keyof Messages]));
      }
    }
  });

  it('parses Accept-Language by quality and matches by primary language', () => {
    expect(parseAcceptLanguage('fr-CH, fr;q=0.9, en;q=0.8, *;q=0.5')).toEqual(['fr-CH', 'fr', 'en']);
    expect(parseAcceptLanguage('de;q=0, ja;q=0.2, es')).toEqual(['es', 'ja']);
    expect(parseAcceptLanguage('x'.repeat(5000))).toEqual([]);
    const set = catalogueSet({ defaultLocale: 'en', catalogues: {} });
    expect(chooseLocale(set, ['pt-PT']).tag).toBe('pt-BR');
    expect(chooseLocale(set, ['es-MX']).tag).toBe('es');
    expect(chooseLocale(set, ['ar-EG']).dir).toBe('rtl');
    expect(chooseLocale(set, ['tlh', 'x-klingon', '']).tag).toBe('en');
  });

  it('writes a host language right to left by its script subtag, else by its language (RFC 5646 §2.2.3)', () => {
    const set = catalogueSet({
      defaultLocale: 'en',
      catalogues: { he: {}, 'ku-Arab': {}, 'pa-Arab': {}, 'sd-Deva': {}, fa: {}, 'az-Latn': {} },
    });
    const dir = (tag: string) => chooseLocale(set, [tag]).dir;
    expect([dir('he'), dir('ku-Arab'), dir('pa-Arab'), dir('fa'), dir('ar')]).toEqual(['rtl', 'rtl', 'rtl', 'rtl', 'rtl']);
    expect([dir('sd-Deva'), dir('az-Latn'), dir('de')]).toEqual(['ltr', 'ltr', 'ltr']);
  });

  it('takes only the qvalues of RFC 9110 §12.4.2 and drops an entry whose q is malformed', () => {
    // 0 to 1 with at most three decimals: 1.999 is no weight above 1, and abc is no weight at all, not 1.
    expect(parseAcceptLanguage('de, fr;q=1.999')).toEqual(['de']);
    expect(parseAcceptLanguage('de, fr;q=abc, ja;q=0.5')).toEqual(['de', 'ja']);
    expect(parseAcceptLanguage('de;q=0.5, fr;q=1.000, ja;q=1., es;q=0.9999, it;q=2, pt;q=-1, ko;q=')).toEqual(['fr', 'ja', 'de']);
    expect(parseAcceptLanguage('de;q=0.5, fr;Q=0.750, en;q=0.')).toEqual(['fr', 'de']);
    expect(parseAcceptLanguage('de;q=0.5, fr;q=abc;q=0.9')).toEqual(['de']);
  });
});

describe('page language', () => {
  it('ui_locales wins over Accept-Language; Accept-Language over the default', async () => {
    const sentinel = makeSentinel({ store: new MemoryStore() });
    const byUi = await loginPage(sentinel, { ui_locales: 'ja en' }, 'de');
    expect(byUi.body).toContain('<html lang="ja">');
    expect(byUi.body).toContain(BUNDLED_CATALOGUES.ja?.signInTitle);
    const byHeader = await loginPage(sentinel, {}, 'de-AT,de;q=0.9,en;q=0.5');
    expect(byHeader.body).toContain('<html lang="de">');
    expect(byHeader.body).toContain('>Benutzername</label>');
    const rtl = await loginPage(sentinel, {}, 'ar');
    expect(rtl.body).toContain('<html lang="ar" dir="rtl">');
    const fallback = await loginPage(sentinel, { ui_locales: 'tlh' }, 'x-unknown');
    expect(fallback.body).toContain('<html lang="en">');
  });

  it('uses the defaultLocale option, and host catalogues add a language or override strings', async () => {
    const sentinel = makeSentinel({
      store: new MemoryStore(),
      i18n: { defaultLocale: 'fr', catalogues: { it: { signInTitle: 'Accedi', username: 'Nome utente' }, es: { signIn: 'Entrar ya' } } },
    });
    expect((await loginPage(sentinel, {})).body).toContain('<html lang="fr">');
    const italian = await loginPage(sentinel, { ui_locales: 'it' });
    expect(italian.body).toContain('<html lang="it">');
    expect(italian.body).toContain('<h1>Accedi</h1>');
    // What the host catalogue leaves out is English, not blank.
    expect(italian.body).toContain('>Password</label>');
    expect((await loginPage(sentinel, { ui_locales: 'es' })).body).toContain('>Entrar ya</button>');
  });

  it('refuses a malformed i18n option at startup', () => {
    expect(() => makeSentinel({ i18n: { defaultLocale: 'not a tag' } })).toThrow(ConfigurationError);
    expect(() => makeSentinel({ i18n: { catalogues: { '<script>': {} } } })).toThrow(ConfigurationError);
    expect(() => makeSentinel({ i18n: { catalogues: { it: { signIn: 42 as unknown as string } } } })).toThrow(ConfigurationError);
  });

  it('names what is wrong: a message that is no text or too long, and a default language no catalogue shows', () => {
    const refusal = (i18n: unknown): string => {
      try {
        makeSentinel({ i18n: i18n as never });
      } catch (error) {
        if (error instanceof ConfigurationError) return error.message;
        throw error;
      }
      throw new Error('the i18n option was accepted');
    };
    expect(refusal({ catalogues: { de: { signIn: null } } })).toBe(
      'sentinel-idp: invalid option i18n.catalogues.de.signIn: must be text of at most 1000 characters (or undefined, for the bundled text)',
    );
    expect(refusal({ catalogues: { de: { signIn: 'x'.repeat(1001) } } })).toBe(
      'sentinel-idp: invalid option i18n.catalogues.de.signIn: must be at most 1000 characters',
    );
    // Quietly English before: a default no catalogue shows is a mistake, as a misspelled option is.
    expect(refusal({ defaultLocale: 'it' })).toBe(
      'sentinel-idp: invalid option i18n.defaultLocale: no catalogue shows "it": add it to i18n.catalogues or use a bundled language (en, es, pt-BR, fr, de, ja, ar)',
    );
    expect(() => makeSentinel({ i18n: { defaultLocale: 'it', catalogues: { it: { signIn: 'Accedi' } } } })).not.toThrow();
  });

  it('finds the default language as a browser preference is found: es-MX shows es, not English', async () => {
    const sentinel = makeSentinel({ store: new MemoryStore(), i18n: { defaultLocale: 'es-MX' } });
    const page = await loginPage(sentinel, {});
    expect(page.body).toContain('<html lang="es">');
    expect(page.body).toContain(BUNDLED_CATALOGUES.es?.signInTitle);
  });

  it('a host message left undefined keeps the bundled text (English in a new language); no page of it fails', async () => {
    // What an i18n library hands over for keys it lacks: every message of a language undefined.
    const blank = Object.fromEntries(Object.keys(en).map((name) => [name, undefined])) as unknown as Partial<Messages>;
    const set = catalogueSet({ defaultLocale: 'en', catalogues: { de: blank, it: { ...blank, signInTitle: 'Accedi' } } });
    expect(chooseLocale(set, ['de']).messages).toEqual(BUNDLED_CATALOGUES.de);
    expect(chooseLocale(set, ['it']).messages).toEqual({ ...en, signInTitle: 'Accedi' });
    const sentinel = makeSentinel({ store: new MemoryStore(), i18n: { catalogues: { de: blank, it: { signIn: undefined } } } });
    const german = await loginPage(sentinel, { ui_locales: 'de' });
    expect(german.status).toBe(200);
    expect(german.body).toContain(`>${BUNDLED_CATALOGUES.de?.signIn}</button>`);
    const italian = await loginPage(sentinel, { ui_locales: 'it' });
    expect(italian.status).toBe(200);
    expect(italian.body).toContain('<html lang="it">');
    expect(italian.body).toContain(`>${en.signIn}</button>`);
    const unknownClient = await call(sentinel, {
      path: `${ACCOUNT_PATH}/authorize`,
      query: authorizeQuery({ client_id: 'nobody', ui_locales: 'de' }),
    });
    expect(unknownClient.status).toBe(401);
    expect(unknownClient.body).toContain(BUNDLED_CATALOGUES.de?.errorUnknown);
  });

  it('translates the wrong-password message, escapes the host strings, and the error and 429 pages', async () => {
    const sentinel = makeSentinel({
      store: new MemoryStore(),
      throttle: { maxFailures: 1, maxFailuresPerIp: 100, windowSeconds: 60 },
      i18n: { catalogues: { es: { signInTitle: '<img src=x onerror=alert(1)>' } } },
    });
    const { interaction } = await startInteraction(sentinel, authorizeQuery({ ui_locales: 'es' }));
    const csrf = await openLogin(sentinel, interaction);
    const wrong = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: 'nope' });
    expect(wrong.body).toContain(BUNDLED_CATALOGUES.es?.wrongCredentials);
    expect(wrong.body).not.toContain('<img src=x');
    expect(wrong.body).toContain('&lt;img src=x');
    const throttled = await call(sentinel, {
      method: 'POST',
      path: LOGIN_PATH,
      query: new URLSearchParams({ interaction }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': 'pt-BR' },
      body: new URLSearchParams({ csrf_token: csrf, username: USERNAME, password: 'nope' }).toString(),
    });
    // The sign-in's ui_locales, not the browser's Accept-Language, as on the sign-in's other pages.
    expect(throttled.status).toBe(429);
    expect(throttled.body).toContain('<html lang="es">');
    expect(throttled.body).toContain(BUNDLED_CATALOGUES.es?.tooManyAttempts);
    const unknownClient = await call(sentinel, {
      path: `${ACCOUNT_PATH}/authorize`,
      query: authorizeQuery({ client_id: 'nobody', ui_locales: 'ja' }),
    });
    expect(unknownClient.status).toBe(401);
    expect(unknownClient.body).toContain('<html lang="ja">');
    expect(unknownClient.body).toContain(BUNDLED_CATALOGUES.ja?.errorUnknown);
    expect(unknownClient.body).toContain('<span lang="en" dir="ltr">');
  });

  it('the error pages of a sign-in (out-of-date form, 429) speak its ui_locales at the login, passkey and TOTP steps', async () => {
    const fr = BUNDLED_CATALOGUES.fr as Messages;
    const secret = generateSecret();
    const sentinel = makeSentinel({
      store: new MemoryStore(),
      throttle: { maxFailures: 1, maxFailuresPerIp: 100, windowSeconds: 60 },
      users: {
        authenticate: async ({ password }) => (password === PASSWORD ? { id: USER_ID, secondFactor: 'totp' } : null),
        totpSecret: async () => secret,
        passkeys: new MemoryPasskeys(),
      },
    });
    // The browser prefers English; the app asked for French.
    const { interaction } = await startInteraction(sentinel, authorizeQuery({ ui_locales: 'fr' }));
    const csrf = await openLogin(sentinel, interaction);
    // A lazy body, as the Node adapters hand it over (the edge then runs the handler on a copy of the request).
    const post = (path: string, form: Record<string, string>, cookie?: string) =>
      postForm(sentinel, path, () => new URLSearchParams(form).toString(), {
        query: new URLSearchParams({ interaction }),
        headers: { 'accept-language': 'en', ...(cookie === undefined ? {} : { cookie }) },
      });
    const expectFrench = (response: SentinelResponse, status: number, title: string) => {
      expect(response.status).toBe(status);
      expect(response.body).toContain('<html lang="fr"');
      expect(response.body).toContain(`<h1>${title}</h1>`);
    };
    expectFrench(await post(LOGIN_PATH, { csrf_token: 'stale', username: USERNAME, password: PASSWORD }), 403, fr.errorRefused);
    expectFrench(await post(`${ACCOUNT_PATH}/login/passkey`, { csrf_token: 'stale', assertion: '{}' }), 403, fr.errorRefused);

    const password = await post(LOGIN_PATH, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
    const cookie = stepCookie(password);
    const totpPath = String(password.headers.location).split('?')[0] as string;
    expect(totpPath).toBe(`${LOGIN_PATH}/totp`);
    expectFrench(await post(totpPath, { csrf_token: 'stale', code: '000000' }, cookie), 403, fr.errorRefused);
    const step = await call(sentinel, { path: totpPath, query: new URLSearchParams({ interaction }), headers: { cookie } });
    const wrongCode = (await generate({ secret })) === '000000' ? '111111' : '000000';
    expect((await post(totpPath, { csrf_token: csrfOf(step.body), code: wrongCode }, cookie)).status).toBe(400);
    expectFrench(await post(totpPath, { csrf_token: csrfOf(step.body), code: wrongCode }, cookie), 429, fr.errorTooManyAttempts);

    expect((await post(LOGIN_PATH, { csrf_token: csrf, username: USERNAME, password: 'nope' })).status).toBe(200);
    expectFrench(await post(LOGIN_PATH, { csrf_token: csrf, username: USERNAME, password: 'nope' }), 429, fr.errorTooManyAttempts);
  });

  it("the error pages of a posted authorization or logout request speak its ui_locales, as a GET's do", async () => {
    const sentinel = makeSentinel({ store: new MemoryStore() });
    const headers = { 'accept-language': 'de' };
    const form = authorizeQuery({ client_id: 'unknown-client', ui_locales: 'fr' }).toString();
    const byGet = await call(sentinel, { path: AUTHORIZE_PATH, query: form, headers });
    expect(byGet.status).toBe(401);
    expect(byGet.body).toContain('<html lang="fr">');
    // Posted without the session cookie: parked, and the GET that names it refuses it.
    const parked = await postForm(sentinel, AUTHORIZE_PATH, form, { headers });
    expect(parked.status).toBe(303);
    const [path, query] = String(parked.headers.location).split('?') as [string, string];
    const byHandle = await call(sentinel, { path, query, headers });
    expect(byHandle.status).toBe(401);
    expect(byHandle.body).toContain('<html lang="fr">');
    // Posted with a session cookie (the same site): answered directly.
    const direct = await postForm(sentinel, AUTHORIZE_PATH, form, { headers: { ...headers, cookie: 'sentinel_session=x' } });
    expect(direct.status).toBe(401);
    expect(direct.body).toContain('<html lang="fr">');
    const logout = await postForm(sentinel, `${ACCOUNT_PATH}/end_session`, 'id_token_hint=not-a-token&ui_locales=ja', { headers });
    expect(logout.status).toBe(400);
    expect(logout.body).toContain('<html lang="ja">');
    // A repeated ui_locales is no choice: the browser's language.
    const repeated = await postForm(sentinel, AUTHORIZE_PATH, `${form}&ui_locales=ja`, {
      headers: { ...headers, cookie: 'sentinel_session=x' },
    });
    expect(repeated.body).toContain('<html lang="de">');
    // Refused while it is parked: the 429 of an address over its bound.
    const bounded = makeSentinel({ store: new MemoryStore(), interactionsPerAddress: 1 });
    expect((await postForm(bounded, AUTHORIZE_PATH, form, { headers })).status).toBe(303);
    const over = await postForm(bounded, AUTHORIZE_PATH, form, { headers });
    expect(over.status).toBe(429);
    expect(over.body).toContain('<html lang="fr">');
  });

  it('the refusals of a sign-out confirmation speak the language its page was shown in', async () => {
    const sentinel = makeSentinel({ store: new MemoryStore() });
    const { cookie } = await signInWithSession(sentinel);
    const browser = { cookie: `sentinel_session=${cookie}`, 'accept-language': 'de' };
    const page = await call(sentinel, { path: `${ACCOUNT_PATH}/end_session`, query: 'ui_locales=ja', headers: browser });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<html lang="ja">');
    const action = /<form method="post" action="([^"]+)"/.exec(page.body ?? '')?.[1]?.replaceAll('&amp;', '&') as string;
    const [path, query] = action.split('?') as [string, string | undefined];
    const confirmation = /name="confirmation" value="([^"]+)"/.exec(page.body ?? '')?.[1] as string;
    const post = (site: string) =>
      postForm(sentinel, path, new URLSearchParams({ confirmation, csrf_token: 'stale' }).toString(), {
        query,
        headers: { ...browser, 'sec-fetch-site': site },
      });
    const stale = await post('same-origin');
    expect(stale.status).toBe(403);
    expect(stale.body).toContain('<html lang="ja">');
    const crossSite = await post('cross-site');
    expect(crossSite.status).toBe(403);
    expect(crossSite.body).toContain('<html lang="ja">');
  });

  it('the signed-out page follows Accept-Language', async () => {
    const sentinel = makeSentinel({ store: new MemoryStore() });
    const response = await call(sentinel, { method: 'POST', path: `${ACCOUNT_PATH}/logout`, headers: { 'accept-language': 'fr' } });
    expect(response.status).toBe(200);
    expect(response.body).toContain('<html lang="fr">');
    expect(response.body).toContain(BUNDLED_CATALOGUES.fr?.signedOutHeading);
  });
});
