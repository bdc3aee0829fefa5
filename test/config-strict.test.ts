/**
 * Issue: a misspelled option was dropped without a word (`keyRotaton`, `pkec`, an app's `redirectUri`), leaving the
 * service on its weaker default. Every object of the options now refuses a key it does not know, naming its full
 * path and the option meant. One test walks the options schema itself, so an option object added later is covered
 * without a new test; the others show the cases a user meets, one per level.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { configProblems, strictOptionsSchema } from '../src/config.js';
import { createSentinel, generatePrivateJWK, isConfigurationError, type SentinelOptions } from '../src/index.js';
import { closestKey, fieldPath } from '../src/lib/strict-options.js';
import { ACCOUNT, baseOptions } from './helpers/fixtures.js';

type Def = { type: string; [name: string]: unknown };
const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

/** Every object the options schema holds, with a path to it (arrays at index 0; records are tested by hand). */
function objectPaths(schema: unknown, path: (string | number)[], found: { path: (string | number)[]; def: Def }[]): void {
  const def = defOf(schema);
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'nonoptional':
    case 'catch':
      objectPaths(def.innerType, path, found);
      return;
    case 'pipe':
      objectPaths(def.in, path, found);
      return;
    case 'array':
      objectPaths(def.element, [...path, 0], found);
      return;
    case 'union':
      for (const option of def.options as unknown[]) objectPaths(option, path, found);
      return;
    case 'object':
      found.push({ path, def });
      for (const [key, value] of Object.entries(def.shape as Record<string, unknown>)) objectPaths(value, [...path, key], found);
      return;
    default:
  }
}

/** A misspelling of one of `known` (two letters swapped) that is unmistakably that key. */
function misspelling(known: string[]): { typo: string; meant: string } {
  for (const meant of known) {
    for (let i = 1; i < meant.length - 1; i += 1) {
      const typo = meant.slice(0, i) + meant[i + 1] + meant[i] + meant.slice(i + 2);
      if (typo !== meant && !known.includes(typo) && closestKey(typo, known) === meant) return { typo, meant };
    }
  }
  throw new Error(`no misspelling for ${known.join(', ')}`);
}

function withValueAt(options: Record<string, unknown>, path: (string | number)[], value: unknown): Record<string, unknown> {
  const root: Record<string, unknown> = { ...options };
  let target: Record<string | number, unknown> = root;
  path.forEach((segment, index) => {
    const last = index === path.length - 1;
    const next = path[index + 1];
    target[segment] = last ? value : typeof next === 'number' ? [] : {};
    target = target[segment] as Record<string | number, unknown>;
  });
  return root;
}

function refusal(options: unknown): string {
  try {
    createSentinel(options as SentinelOptions);
  } catch (error) {
    if (isConfigurationError(error)) return error.message;
    throw error;
  }
  throw new Error('the options were accepted');
}

describe('every object of the options refuses an unknown key', () => {
  const objects: { path: (string | number)[]; def: Def }[] = [];
  objectPaths(strictOptionsSchema, [], objects);

  it('walks the whole schema (top level, apps, and every nested option object)', () => {
    const paths = objects.map(({ path }) => fieldPath('', path));
    for (const expected of ['', 'apps[0]', 'login', 'keyRotation', 'session', 'refreshToken', 'throttle', 'telemetry', 'registration']) {
      expect(paths).toContain(expected);
    }
    expect(paths).toContain('verifiedTokens');
    expect(paths).toContain('dpop');
    expect(paths).toContain('i18n');
    expect(paths).toContain('passkeys');
    expect(paths).toContain('clientJwks');
  });

  it('names the full path and the option meant, at every level the schema has', () => {
    const checked: string[] = [];
    for (const { path, def } of objects) {
      if (def.catchall === undefined || defOf(def.catchall).type !== 'never') {
        // The named exceptions only (an app's and a trusted issuer's jwks: RFC 7517 §5 lets a JWK Set carry members
        // a reader ignores).
        expect(['apps[0].jwks', 'trustedIssuers[0].jwks']).toContain(fieldPath('', path));
        continue;
      }
      const { typo, meant } = misspelling(Object.keys(def.shape as Record<string, unknown>));
      const options = path.length === 0 ? { ...baseOptions(), [typo]: 1 } : withValueAt({ ...baseOptions() }, path, { [typo]: 1 });
      const field = fieldPath('', [...path, typo]);
      const problems = configProblems(options);
      expect(problems, field).toContainEqual({ field, message: `unknown option "${typo}" — did you mean "${meant}"?` });
      checked.push(field);
    }
    expect(checked.length).toBeGreaterThanOrEqual(15);
  });
});

describe('the mistakes a new user makes', () => {
  it('top level: keyRotaton and pkec are refused, not dropped', () => {
    expect(refusal({ ...baseOptions(), keyRotaton: { encryptionKey: 'k'.repeat(43) } })).toBe(
      'sentinel-idp: invalid option keyRotaton: unknown option "keyRotaton" — did you mean "keyRotation"?',
    );
    expect(refusal({ ...baseOptions(), pkec: 'required' })).toMatch(/invalid option pkec: unknown option "pkec" — did you mean "pkce"\?$/);
  });

  it('app: redirectUri in apps[2] is named with its index', () => {
    const options = baseOptions();
    const apps = [...(options.apps ?? [])];
    apps[2] = { ...apps[2]!, redirectUri: ['https://app.example.com/cb'] } as never;
    expect(refusal({ ...options, apps })).toBe(
      'sentinel-idp: invalid option apps[2].redirectUri: unknown option "redirectUri" — did you mean "redirectUris"?',
    );
  });

  it('nested: keyRotation, session, throttle, refreshToken, login, telemetry, registration, verifiedTokens', () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [
        { keyRotation: { encryptionKey: 'k'.repeat(43), rotateEverySeconds: 86_400, prePublishSeconds: 3600, retainSecond: 1 } },
        'keyRotation.retainSecond',
        'retainSeconds',
      ],
      [{ session: { idelTtl: 60 } }, 'session.idelTtl', 'idleTtl'],
      [{ throttle: { maxFailure: 3 } }, 'throttle.maxFailure', 'maxFailures'],
      [{ refreshToken: { absoluteTTL: 60 } }, 'refreshToken.absoluteTTL', 'absoluteTtl'],
      [{ login: { ulr: '/login' } }, 'login.ulr', 'url'],
      [{ telemetry: { identifierInMetrics: true } }, 'telemetry.identifierInMetrics', 'identifiersInMetrics'],
      [{ registration: { initialAccessToken: 'x'.repeat(20), secretOverlap: 5 } }, 'registration.secretOverlap', 'secretOverlapSeconds'],
      [{ verifiedTokens: { maxEntrys: 5 } }, 'verifiedTokens.maxEntrys', 'maxEntries'],
      [{ dpop: { nonces: true } }, 'dpop.nonces', 'nonce'],
      [{ passkeys: { offerRegistraton: true } }, 'passkeys.offerRegistraton', 'offerRegistration'],
      [{ i18n: { defaultLocal: 'fr' } }, 'i18n.defaultLocal', 'defaultLocale'],
    ];
    for (const [options, field, meant] of cases) {
      const key = field.split('.').at(-1);
      expect(refusal({ ...baseOptions(), ...options })).toBe(
        `sentinel-idp: invalid option ${field}: unknown option "${key}" — did you mean "${meant}"?`,
      );
    }
  });

  it("a catalogue message name and a misspelled users hook are refused too (not the user service's own members)", () => {
    expect(refusal({ ...baseOptions(), i18n: { catalogues: { it: { signin: 'Accedi' } } } })).toBe(
      'sentinel-idp: invalid option i18n.catalogues.it.signin: unknown option "signin" — did you mean "signIn"?',
    );
    const users = { authenticate: async () => null, totpSecert: async () => 'JBSWY3DPEHPK3PXP' };
    expect(refusal({ ...baseOptions(), users })).toBe(
      'sentinel-idp: invalid option users.totpSecert: unknown option "totpSecert" — did you mean "totpSecret"?',
    );
    // The host's own members of its user service are its business; only a near miss of a hook is refused.
    const own = { authenticate: async () => null, addUser: async () => undefined, db: {} };
    expect(() => createSentinel({ ...baseOptions(), users: own })).not.toThrow();
    expect(refusal({ ...baseOptions(), users: { ...own, claim: async () => null } })).toMatch(/users\.claim: .*did you mean "claims"\?$/);
    class Directory {
      readonly pool = {};
      authenticate = async () => null;
    }
    expect(() => createSentinel({ ...baseOptions(), users: new Directory() })).not.toThrow();
  });

  it('an app key set may carry members RFC 7517 §5 says to ignore (the one named exception)', () => {
    const { d: _private, ...publicKey } = generatePrivateJWK('ES256');
    const app = { accountId: ACCOUNT, clientId: 'k', ...KEYED, jwks: { keys: [publicKey], note: 'rotated monthly' } };
    expect(configProblems({ ...baseOptions(), apps: [app] })).toEqual([]);
    expect(configProblems({ ...baseOptions(), apps: [{ ...app, jwksUrl: 'https://k.example/jwks' }] })).toEqual([
      { field: 'apps[0].jwksUrl', message: 'unknown option "jwksUrl" — did you mean "jwksUri"?' },
    ]);
  });

  it('reports every problem at once; the error names the first and counts the rest', () => {
    const options = { ...baseOptions(), pkec: 'required', session: { idelTtl: 5 }, throttle: { maxFailure: 3 } };
    expect(configProblems(options).map((problem) => problem.field)).toEqual(['session.idelTtl', 'throttle.maxFailure', 'pkec']);
    expect(refusal(options)).toMatch(/invalid option session\.idelTtl: .* \(and 2 more: throttle\.maxFailure, pkec\)$/);
  });

  it('does not echo a key that does not look like an option name', () => {
    const message = refusal({ ...baseOptions(), 'hunter2 = my password': 1 });
    expect(message).not.toContain('hunter2');
  });

  it('suggests nothing when nothing is close', () => {
    expect(refusal({ ...baseOptions(), colour: 'red' })).toBe('sentinel-idp: invalid option colour: unknown option "colour"');
  });
});

// A private_key_jwt app with an inline key set, for the jwks exception.
const KEYED = {
  tokenEndpointAuthMethod: 'private_key_jwt',
  grantTypes: ['client_credentials'],
  redirectUris: [],
} as const satisfies Partial<z.input<typeof strictOptionsSchema>['apps'] extends (infer A)[] | undefined ? A : never>;
