/**
 * What `createSentinel()` refuses options with, in the shape `configProblems()` reports a problem: the suites that
 * hold `sentinel-idp config check` to the same answers as the service's start-up compare the two.
 */
import { createSentinel, isConfigurationError, type SentinelOptions } from '../../src/index.js';

/**
 * The field and message of the ConfigurationError `createSentinel(options)` throws; throws itself when the options
 * are accepted or the error is of another kind.
 *
 * @example expect(configProblems(options)).toEqual([startupRefusal(options)]);
 */
export function startupRefusal(options: SentinelOptions): { field: string; message: string } {
  try {
    createSentinel({ ...options, logger: { warn: () => {} } });
  } catch (error) {
    if (!isConfigurationError(error)) throw error;
    return { field: error.field, message: error.message.replace(`sentinel-idp: invalid option ${error.field}: `, '') };
  }
  throw new Error('createSentinel accepted the options');
}
