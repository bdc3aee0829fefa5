/**
 * The back-channel logout fields of an app: `backchannelLogoutUri` and `backchannelLogoutSessionRequired` in `apps`,
 * `registerApp()` and RFC 7591/7592 registration (`backchannel_logout_uri`, `backchannel_logout_session_required`),
 * and the refusals of a URI that is not https outside loopback, has a fragment, or points at a refused address.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, type SentinelOptions } from '../src/index.js';
import { jsonOf } from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, makeSentinel } from './helpers/fixtures.js';
import { INITIAL_ACCESS_TOKEN, manageClient, postRegistration, registerClient } from './helpers/registration-client.js';

function withApp(fields: Record<string, unknown>, extra: Partial<SentinelOptions> = {}): SentinelOptions {
  const base = baseOptions(extra);
  return {
    ...base,
    apps: [
      ...(base.apps ?? []),
      {
        accountId: ACCOUNT,
        clientId: 'logout-app',
        clientSecret: 'logout-app-secret-0123456789abcdef',
        redirectUris: ['https://rp.example.com/cb'],
        ...fields,
      },
    ],
  };
}

const registration = { registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } };

describe('backchannelLogoutUri in apps', () => {
  it('accepts https, and http on a loopback host when private addresses are allowed', async () => {
    const sentinel = makeSentinel(
      withApp({ backchannelLogoutUri: 'https://rp.example.com/logout', backchannelLogoutSessionRequired: false }),
    );
    const app = await (await import('../src/http/context.js')).contextOf(sentinel).apps.findApp(ACCOUNT, 'logout-app');
    expect(app?.backchannelLogoutUri).toBe('https://rp.example.com/logout');
    expect(app?.backchannelLogoutSessionRequired).toBe(false);
    expect(() =>
      makeSentinel(withApp({ backchannelLogoutUri: 'http://127.0.0.1:8080/logout' }, { clientJwks: { allowPrivateAddresses: true } })),
    ).not.toThrow();
  });

  it.each([
    ['http://rp.example.com/logout', /https/],
    ['https://rp.example.com/logout#frag', /fragment/],
    ['https://user@rp.example.com/logout', /userinfo/],
    ['com.example.app:/logout', /https/],
    ['http://127.0.0.1:8080/logout', /private, loopback or link-local/],
    ['https://169.254.169.254/latest', /private, loopback or link-local/],
    ['https://localhost/logout', /private, loopback or link-local/],
    ['https://localhost./logout', /private, loopback or link-local/],
    ['https://rp.localhost./logout', /private, loopback or link-local/],
  ])('refuses %s at startup', (uri, reason) => {
    expect(() => makeSentinel(withApp({ backchannelLogoutUri: uri }))).toThrow(ConfigurationError);
    expect(() => makeSentinel(withApp({ backchannelLogoutUri: uri }))).toThrow(reason);
  });

  it('refuses a non-boolean backchannelLogoutSessionRequired', () => {
    expect(() => makeSentinel(withApp({ backchannelLogoutSessionRequired: 'yes' }))).toThrow(ConfigurationError);
  });
});

describe('backchannelLogoutUri in registerApp()', () => {
  it('keeps the fields, and refuses a refused address before saving anything', async () => {
    const sentinel = makeSentinel();
    const { app } = await sentinel.registerApp({
      accountId: ACCOUNT,
      redirectUris: ['https://rp.example.com/cb'],
      backchannelLogoutUri: 'https://rp.example.com/logout',
    });
    expect(app.backchannelLogoutUri).toBe('https://rp.example.com/logout');
    await expect(
      sentinel.registerApp({
        accountId: ACCOUNT,
        redirectUris: ['https://rp.example.com/cb'],
        backchannelLogoutUri: 'https://10.0.0.7/logout',
      }),
    ).rejects.toThrow(/private, loopback or link-local/);
    await expect(
      sentinel.registerApp({
        accountId: ACCOUNT,
        redirectUris: ['https://rp.example.com/cb'],
        backchannelLogoutUri: 'http://rp.example.com/l',
      }),
    ).rejects.toThrow(ConfigurationError);
  });
});

describe('backchannel_logout_uri over RFC 7591 and RFC 7592', () => {
  const body = { redirect_uris: ['https://rp.example.com/cb'], grant_types: ['authorization_code'] };

  it('registers, reads back and replaces the two members', async () => {
    const sentinel = makeSentinel(registration);
    const info = await registerClient(sentinel, { ...body, backchannel_logout_uri: 'https://rp.example.com/logout' });
    expect(info.backchannel_logout_uri).toBe('https://rp.example.com/logout');
    expect(info.backchannel_logout_session_required).toBe(true);
    const updated = await manageClient(sentinel, 'PUT', info, {
      body: {
        ...body,
        client_id: info.client_id,
        backchannel_logout_uri: 'https://rp.example.com/bye',
        backchannel_logout_session_required: false,
      },
    });
    expect(updated.status, updated.body).toBe(200);
    expect(jsonOf(updated)).toMatchObject({
      backchannel_logout_uri: 'https://rp.example.com/bye',
      backchannel_logout_session_required: false,
    });
    const cleared = await manageClient(sentinel, 'PUT', info, { body: { ...body, client_id: info.client_id } });
    expect(jsonOf(cleared).backchannel_logout_uri).toBeUndefined();
  });

  it.each([
    ['http://rp.example.com/logout', /https/],
    ['https://rp.example.com/logout#x', /fragment/],
    ['https://127.0.0.1/logout', /private, loopback or link-local/],
    ['https://192.168.1.10/logout', /private, loopback or link-local/],
    ['https://LOCALHOST./logout', /private, loopback or link-local/],
    ['https://rp.localhost./logout', /private, loopback or link-local/],
    [42, /string/],
  ])('refuses %s with invalid_client_metadata, registering nothing', async (uri, reason) => {
    const sentinel = makeSentinel(registration);
    const response = await postRegistration(sentinel, { ...body, backchannel_logout_uri: uri });
    expect(response.status).toBe(400);
    expect(jsonOf(response).error).toBe('invalid_client_metadata');
    expect(String(jsonOf(response).error_description)).toMatch(reason);
    const apps = await (await import('../src/http/context.js')).contextOf(sentinel).apps.listApps?.(ACCOUNT);
    expect(apps?.some((app) => app.backchannelLogoutUri !== undefined)).toBe(false);
  });

  it('refuses a non-boolean backchannel_logout_session_required', async () => {
    const sentinel = makeSentinel(registration);
    const response = await postRegistration(sentinel, { ...body, backchannel_logout_session_required: 'true' });
    expect(jsonOf(response).error).toBe('invalid_client_metadata');
  });
});
