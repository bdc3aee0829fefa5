/**
 * `ui_locales` reaches a host's login page (the `login.render` view, `sentinel.interaction()`) as BCP 47 language
 * tags, whichever way the sign-in began: the authorization endpoint keeps only tag-shaped values, and so must the
 * pages that start a sign-in of their own (the account page, the device page) from a link anyone can craft.
 */
import { describe, expect, it } from 'vitest';
import type { LoginView, SentinelRequest } from '../src/index.js';
import { requestUiLocales } from '../src/i18n/page-locale.js';
import { ACCOUNT_PATH, authorizeQuery, call, startInteraction } from './helpers/direct-flow.js';
import { makeSentinel } from './helpers/fixtures.js';

const PAGE = `${ACCOUNT_PATH}/account`;
const HOSTILE = '"><svg/onload=alert(1)>';

describe('ui_locales of a sign-in begun on the account page', () => {
  it('reach login.render, the interaction view and the page links as language tags only', async () => {
    const seen: LoginView[] = [];
    const sentinel = makeSentinel({
      account: { enabled: true },
      login: {
        render: (view) => {
          seen.push(view);
          return '<!doctype html><title>sign in</title>';
        },
      },
    });
    const query = new URLSearchParams({ ui_locales: `de ${HOSTILE} fr-CA` });
    const start = await call(sentinel, { path: PAGE, query });
    expect(start.status).toBe(303);
    const interaction = /[?&]interaction=([A-Za-z0-9_-]{43})$/.exec(String(start.headers.location))?.[1] as string;
    expect((await sentinel.interaction(interaction))?.uiLocales).toEqual(['de', 'fr-CA']);
    const login = await call(sentinel, { path: `${ACCOUNT_PATH}/login`, query: new URLSearchParams({ interaction }) });
    expect(login.status).toBe(200);
    expect(seen.at(-1)?.uiLocales).toEqual(['de', 'fr-CA']);
    // The "not signed in" page links back with the tags it kept.
    const cancelled = await call(sentinel, {
      path: PAGE,
      query: new URLSearchParams({ ui_locales: `${HOSTILE} ja`, signin: 'cancelled' }),
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toContain(`href="${PAGE}?ui_locales=ja"`);
  });
});

describe('requestUiLocales (the account and device pages)', () => {
  it('keeps language tags of at most 35 characters and drops everything else', () => {
    const of = (value: string) => requestUiLocales({ query: new URLSearchParams({ ui_locales: value }) } as unknown as SentinelRequest);
    expect(of(`pt-BR ${HOSTILE} en`)).toEqual(['pt-BR', 'en']);
    expect(of('de_DE en-US- -x ja')).toEqual(['ja']);
    expect(of(`${'a'.repeat(8)}-${'b'.repeat(8)}-${'c'.repeat(8)}-${'d'.repeat(8)}-e es`)).toEqual(['es']);
  });
});

describe('ui_locales of an authorization request', () => {
  it('keeps language tags of at most 35 characters, as the pages do', async () => {
    const sentinel = makeSentinel();
    const long = `${'a'.repeat(8)}-${'b'.repeat(8)}-${'c'.repeat(8)}-${'d'.repeat(8)}-e`; // tag-shaped, 36 characters
    const { interaction } = await startInteraction(sentinel, authorizeQuery({ ui_locales: `${long} de ${HOSTILE} fr-CA` }));
    expect((await sentinel.interaction(interaction))?.uiLocales).toEqual(['de', 'fr-CA']);
  });
});
