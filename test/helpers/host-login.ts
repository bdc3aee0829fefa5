/**
 * A host's own login page (`login.url`) in the tests of sign-ins that end through `sentinel.completeLogin()`: where
 * the service sends the browser, and the interaction it hands that page.
 */
import { expect } from 'vitest';
import type { SentinelResponse } from '../../src/index.js';

/** The host's login page, on another origin than the service. */
export const HOST_LOGIN = 'https://host.example.com/sign-in';

/**
 * The interaction of a 303 to {@link HOST_LOGIN}, which it must be.
 * @example const interaction = hostInteraction(await enterCode(sentinel, {}, codes.user_code));
 */
export function hostInteraction(response: SentinelResponse): string {
  expect(response.status).toBe(303);
  const location = String(response.headers.location);
  expect(location).toMatch(new RegExp(`^${HOST_LOGIN}\\?interaction=[A-Za-z0-9_-]{43}$`));
  return new URL(location).searchParams.get('interaction') as string;
}
