/**
 * An app's name is shown on the login page, so it may not hold characters that change how it reads: bidirectional
 * overrides, embeddings, isolates and marks (`Acme\u202Egnp.exe` shows as "Acmeexe.png"), control characters, line
 * separators, unpaired surrogates; and a name with nothing to show. Refused at every registration path, with the field named; ordinary names in any
 * script (joiners included) are kept.
 */
import { describe, expect, it } from 'vitest';
import { runAppsRegister } from '../src/cli/apps-register.js';
import type { CLIIO } from '../src/cli/io.js';
import { contextOf } from '../src/http/context.js';
import { displayTextProblem } from '../src/apps/display-text.js';
import { isConfigurationError } from '../src/index.js';
import { jsonOf } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { INITIAL_ACCESS_TOKEN, manageClient, postRegistration, registerClient } from './helpers/registration-client.js';

const SPOOFING: readonly (readonly [string, string])[] = [
  ['U+202E right-to-left override', 'Acme\u202Egnp.exe'],
  ['U+202D left-to-right override', 'Acme\u202Dx'],
  ['U+202A left-to-right embedding', '\u202AAcme'],
  ['U+202B right-to-left embedding', '\u202BAcme'],
  ['U+202C pop directional formatting', 'Acme\u202C'],
  ['U+2066 left-to-right isolate', 'Acme\u2066x'],
  ['U+2067 right-to-left isolate', 'Acme\u2067x'],
  ['U+2068 first strong isolate', 'Acme\u2068x'],
  ['U+2069 pop directional isolate', 'Acme\u2069'],
  ['U+200E left-to-right mark', 'Acme\u200E'],
  ['U+200F right-to-left mark', 'Acme\u200F'],
  ['U+061C Arabic letter mark', 'Acme\u061C'],
  ['U+0085 next line (C1)', 'Acme\u0085Bank'],
  ['U+009B control sequence introducer (C1)', 'Acme\u009B31m'],
  ['U+2028 line separator', 'Acme\u2028Bank'],
  ['U+2029 paragraph separator', 'Acme\u2029Bank'],
  ['a lone high surrogate', 'Acme\uD83D'],
  ['a lone low surrogate', 'Acme\uDE00'],
  // Nothing to show: the login page would ask to continue to an app it cannot name.
  ['nothing', ''],
  ['only white space', ' \u00A0\u3000 '],
  // Nor with nothing but characters fonts draw as nothing (default-ignorable code points), which trim() keeps.
  ['only a Hangul filler', '\u3164'],
  ['only zero-width characters', '\u200B\u2060\u200D'],
  ['only a soft hyphen and white space', ' \u00AD '],
  ['only the half-width Hangul filler and a variation selector', '\uFFA0\uFE0F'],
  ['only blank Braille patterns', '\u2800\u2800'],
];

const KEPT: readonly string[] = [
  'Acme Messenger',
  'شركة أكمي',
  'אקמי',
  // Persian with a zero-width non-joiner, an emoji sequence with zero-width joiners.
  'می\u200Cخواهم',
  '\u{1F469}\u200D\u{1F4BB} Dev tools',
  'Acme (staging) — v2',
];

const silentIO: CLIIO = { stdout: () => {}, stderr: () => {}, env: {}, readSecret: async () => null };

function fieldOf(build: () => unknown): string | undefined {
  try {
    build();
  } catch (error) {
    return isConfigurationError(error) ? error.field : `not a ConfigurationError: ${String(error)}`;
  }
  return undefined;
}

function staticApp(name: string) {
  return {
    apps: [
      {
        accountId: ACCOUNT,
        clientId: 'c-display',
        clientSecret: 'a-secret-of-the-test-app',
        name,
        redirectUris: ['https://app.example.com/cb'],
      },
    ],
  };
}

describe('app names are shown as registered', () => {
  it.each(SPOOFING)('refuses a name with %s everywhere', async (_label, name) => {
    expect(displayTextProblem(name)).not.toBeNull();
    expect(fieldOf(() => makeSentinel(staticApp(name)))).toBe('apps[0].name');

    const sentinel = makeSentinel({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
    const before = contextOf(sentinel).apps.listApps?.(ACCOUNT);
    const error = await sentinel.registerApp({ accountId: ACCOUNT, grantTypes: ['client_credentials'], name }).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(isConfigurationError(error) ? error.field : error).toBe('app.name');

    const created = await postRegistration(sentinel, { grant_types: ['client_credentials'], client_name: name });
    expect(created.status, created.body).toBe(400);
    expect(jsonOf(created)).toMatchObject({ error: 'invalid_client_metadata' });
    expect(jsonOf(created).error_description).toMatch(/^client_name /);
    expect(contextOf(sentinel).apps.listApps?.(ACCOUNT)).toEqual(before);

    const info = await registerClient(sentinel, { grant_types: ['client_credentials'], client_name: 'Acme' });
    const updated = await manageClient(sentinel, 'PUT', info, {
      body: { client_id: info.client_id, grant_types: ['client_credentials'], client_name: name },
    });
    expect(updated.status, updated.body).toBe(400);
    expect(jsonOf(updated).error).toBe('invalid_client_metadata');
    expect(jsonOf(await manageClient(sentinel, 'GET', info)).client_name).toBe('Acme');

    await expect(runAppsRegister(['--account', ACCOUNT, '--grant', 'client_credentials', '--name', name], silentIO)).rejects.toThrow(
      /bidirectional|well-formed|white space|non-empty/,
    );
  });

  it.each(KEPT.map((name) => [name] as const))('keeps %s', async (name) => {
    expect(displayTextProblem(name)).toBeNull();
    expect(fieldOf(() => makeSentinel(staticApp(name)))).toBeUndefined();
    const sentinel = makeSentinel({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
    expect((await sentinel.registerApp({ accountId: ACCOUNT, grantTypes: ['client_credentials'], name })).app.name).toBe(name);
    const info = await registerClient(sentinel, { grant_types: ['client_credentials'], client_name: name });
    expect(info.client_name).toBe(name);
  });
});
