/**
 * A host's catalogue keeps each message's placeholders: the login page's `continueTo` and the device page's
 * `deviceConfirmAsks` name the app that asks through `{app}`, so a translation that drops it would ask the user to
 * sign in, or to hand a device their account, without saying for which app; an unknown `{name}` would show as it is.
 * Refused at startup, for the service's catalogues and the console's.
 */
import { describe, expect, it } from 'vitest';
import { createConsole } from '../src/console/index.js';
import { ConfigurationError } from '../src/errors.js';
import { makeSentinel } from './helpers/fixtures.js';

describe("a host catalogue keeps the English message's placeholders", () => {
  it('refuses a page message that drops or adds one, and takes one that reorders or repeats them', () => {
    for (const catalogue of [
      { continueTo: 'per continuare' },
      { deviceConfirmAsks: 'Un dispositivo chiede di usare il tuo account.' },
      { continueTo: 'per continuare su {applicazione}' },
      { signIn: 'Accedi {app}' },
    ]) {
      expect(() => makeSentinel({ i18n: { catalogues: { it: catalogue } } }), JSON.stringify(catalogue)).toThrow(
        /exactly the placeholders|no placeholder/,
      );
    }
    expect(() =>
      makeSentinel({ i18n: { catalogues: { it: { continueTo: 'per continuare su {app}', errorReturnToApp: '{host} ({host})' } } } }),
    ).not.toThrow();
  });

  it('refuses a console message that drops or adds one', () => {
    const sentinel = makeSentinel();
    const build = (messages: Record<string, string>) => () =>
      createConsole(sentinel, { authorize: () => 'admin', i18n: { catalogues: { de: messages } } });
    expect(build({ notOperatorLead: 'Du bist kein Operator dieses Kontos.' })).toThrow(ConfigurationError);
    expect(build({ navApps: 'Apps {account}' })).toThrow(ConfigurationError);
    expect(build({ notOperatorLead: 'Kein Operator von {account}.', navApps: 'Anwendungen' })).not.toThrow();
  });
});
