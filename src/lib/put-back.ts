/**
 * Putting back what a request took when the rest of it fails on the service's side. A store write that fails, or an
 * `onEvent` that vetoes, is answered `500 server_error`, which the guides promise the client or the user can simply
 * retry: so what the request took first (an interaction, a sign-in's waiting step, a device confirmation) must be
 * there again for the retry. A refusal (any other `OAuthError`) is an answer, and leaves it taken.
 */
import { isOAuthError } from '../errors.js';

/**
 * Runs `end`; when it fails on the service's side, runs `putBack` before the failure is thrown. A put-back that fails
 * as well (the store is down) is not thrown over the first failure, which is the answer.
 *
 * @example
 * return puttingBackOnFailure(() => signedInResponse(context, taken, input), () => restoreInteraction(context, id, taken));
 */
export async function puttingBackOnFailure<T>(end: () => Promise<T>, putBack: () => Promise<unknown>): Promise<T> {
  try {
    return await end();
  } catch (error) {
    if (!isOAuthError(error) || error.code === 'server_error') await putBack().catch(() => undefined);
    throw error;
  }
}
