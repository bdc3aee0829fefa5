/**
 * The options' problems as a list rather than a thrown error, for `sentinel-idp config check`, which reports every
 * one of them at once where `createSentinel()` stops at the first.
 */
import { assertFapi2App } from '../assurance/fapi2.js';
import { checkedApp } from '../apps/app-schema.js';
import { isConfigurationError } from '../errors.js';
import { type CheckedKeyOptions, checkKeyOptions } from '../keys/keyring/key-options.js';
import { loadKeys } from '../keys/signing-keys.js';
import { type OptionProblem, parseOptions } from '../lib/strict-options.js';
import type { SentinelOptions } from '../options.js';
import { type ResolvedConfig, resolveConfig } from './resolve.js';
import { strictOptionsSchema } from './schema.js';
import {
  appRegistry,
  assertAppLogoutTargets,
  assertAppsOrAppStore,
  checkFapi2ProofAlgorithms,
  checkFapi2Signing,
  checkIDTokenAlgorithms,
  checkRegistrationStore,
} from './startup-checks.js';

/** The warnings of the checks (no RS256 key, temporary keys): `config check` reports problems, not advice. */
const ignoreWarning = (): void => {};

/**
 * Every problem of `options` at once, for `sentinel-idp config check`: each unknown key and wrong value the schema
 * finds, or, when it finds none, the first of the checks across fields, the first problem of the signing key options,
 * each app's own problem and the first of each check `createSentinel()` makes of the resolved options
 * (src/config/startup-checks.ts). Empty when `createSentinel()` accepts them.
 * @example for (const { field, message } of configProblems(options)) console.log(`${field}: ${message}`);
 */
export function configProblems(options: unknown): OptionProblem[] {
  if (typeof options !== 'object' || options === null) return [{ field: 'options', message: 'must be an object' }];
  const result = parseOptions(strictOptionsSchema, options, '');
  if (!result.success) return result.problems;
  const problems: OptionProblem[] = [];
  const collect = (check: () => unknown): void => {
    try {
      check();
    } catch (error) {
      if (!isConfigurationError(error)) throw error;
      const prefix = `sentinel-idp: invalid option ${error.field}: `;
      const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
      if (!problems.some((problem) => problem.field === error.field && problem.message === message)) {
        problems.push({ field: error.field, message });
      }
    }
  };
  let config: ResolvedConfig | undefined;
  collect(() => {
    config = resolveConfig(options as SentinelOptions);
  });
  // The checks createSentinel() makes of the keys after resolving (setUpKeys): the same function, nothing created.
  let checked: CheckedKeyOptions | undefined;
  collect(() => {
    checked = checkKeyOptions(result.data);
  });
  result.data.apps.forEach((entry, index) => {
    collect(() => assertFapi2App(checkedApp(entry, `apps[${index}]`), `apps[${index}]`));
  });
  if (config !== undefined) serviceProblems(config, checked, collect);
  return problems;
}

/**
 * The checks createSentinel() makes of the resolved options once its keys are set up, in its order. The signing
 * checks need the keys it signs with, so they run only when the key options passed: the configured keys, or, with
 * neither `keys` nor `keyRotation`, the temporary ones it would generate (their algorithms are what it checks).
 */
function serviceProblems(config: ResolvedConfig, checked: CheckedKeyOptions | undefined, collect: (check: () => unknown) => void): void {
  if (checked !== undefined) {
    const keys = config.keyRotation === undefined ? (checked.configured ?? loadKeys(undefined, ignoreWarning)) : undefined;
    collect(() => checkIDTokenAlgorithms(config, keys, ignoreWarning));
    collect(() => checkFapi2Signing(config, keys));
  }
  collect(() => checkFapi2ProofAlgorithms(config));
  collect(() => assertAppsOrAppStore(config));
  // The registry unwrapped: createSentinel() checks it behind client ID metadata documents, which pass every method
  // of the registry through, so both see the same methods.
  collect(() => checkRegistrationStore(config, appRegistry(config)));
  collect(() => assertAppLogoutTargets(config));
}
