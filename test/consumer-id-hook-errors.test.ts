/**
 * A host's yes/no hook that fails is the host's fault, never the client's. The `consumerId` validator may call the
 * service's own verifier (a consumer's token the host looks up), which refuses with an OAuthError: that error must
 * not reach the client as its answer (a 401 `invalid_token` for a good request) but be a `500 server_error` whose
 * cause `onError` receives, nothing issued, at the v2 app token endpoint and at the brand JWT grant alike.
 */
import { describe, expect, it, vi } from 'vitest';
import { OAuthError } from '../src/index.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { BOT, brandJWT, brandKey, exchangeOptions, JWT_BEARER, TOKEN_PATH } from './helpers/exchange.js';
import { appTokenPath, basic, CLIENT_ID, CLIENT_SECRET, makeSentinel } from './helpers/fixtures.js';

const key = await brandKey();

/** A validator that fails with the service's own error, and the hooks that watch what comes of it. */
function failing() {
  return {
    consumerId: (): boolean => {
      throw new OAuthError('invalid_token', 'the consumer token the host looked up is not valid');
    },
    onError: vi.fn((_error: unknown) => {}),
    onEvent: vi.fn((_event: { type: string }) => {}),
  };
}

function expectReported(response: { status: number; body?: string }, hooks: ReturnType<typeof failing>): void {
  expect(response.status, response.body).toBe(500);
  expect(jsonOf(response as never).error).toBe('server_error');
  expect(jsonOf(response as never).access_token).toBeUndefined();
  expect(response.body).not.toContain('the consumer token the host looked up');
  // onError gets the cause, the hook's own error, as for every server_error.
  expect(hooks.onError).toHaveBeenCalledTimes(1);
  expect(hooks.onError.mock.calls[0]?.[0]).toMatchObject({ code: 'invalid_token' });
  expect(hooks.onEvent.mock.calls.some((call) => ['token.issued', 'token.exchanged'].includes(call[0].type))).toBe(false);
}

describe('a consumerId validator that throws an OAuthError', () => {
  it('is a 500 server_error at the v2 app token endpoint, reported with its cause, nothing issued', async () => {
    const hooks = failing();
    const sentinel = makeSentinel(hooks);
    const response = await postForm(sentinel, appTokenPath(), 'grant_type=client_credentials', {
      headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    });
    expectReported(response, hooks);
  });

  it('is a 500 server_error at the JWT bearer grant, reported with its cause, nothing issued', async () => {
    const hooks = failing();
    const sentinel = makeSentinel(exchangeOptions(key, hooks));
    const response = await postForm(
      sentinel,
      TOKEN_PATH,
      new URLSearchParams({ grant_type: JWT_BEARER, assertion: await brandJWT(key), ...BOT }).toString(),
    );
    expectReported(response, hooks);
  });
});
