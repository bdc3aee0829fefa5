/**
 * The options' problems as a list rather than a thrown error, for `sentinel-idp config check`, which reports every
 * one of them at once where `createSentinel()` stops at the first.
 */
import { assertFapi2App } from '../assurance/fapi2.js';
import { checkedApp } from '../apps/app-schema.js';
import { isConfigurationError } from '../errors.js';
import { checkKeyOptions } from '../keys/keyring/key-options.js';
import { type OptionProblem, parseOptions } from '../lib/strict-options.js';
import type { SentinelOptions } from '../options.js';
import { resolveConfig } from './resolve.js';
import { strictOptionsSchema } from './schema.js';

/**
 * Every problem of `options` at once, for `sentinel-idp config check`: each unknown key and wrong value the schema
 * finds, or, when it finds none, the first of the checks across fields, the first problem of the signing key options
 * and each app's own problem. Empty when {@link resolveConfig} and the key checks of `createSentinel()` accept them.
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
  collect(() => resolveConfig(options as SentinelOptions));
  // The checks createSentinel() makes of the keys after resolving (setUpKeys): the same function, nothing created.
  collect(() => checkKeyOptions(result.data));
  result.data.apps.forEach((entry, index) => {
    collect(() => assertFapi2App(checkedApp(entry, `apps[${index}]`), `apps[${index}]`));
  });
  return problems;
}
