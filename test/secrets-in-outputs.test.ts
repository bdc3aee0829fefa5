/**
 * Nothing secret in what the service emits, flow by flow, with distinctive values: device codes, registration and
 * initial access tokens, registered client secrets, TOTP secrets and codes, recovery codes, typed passwords, client
 * assertions, DPoP proofs (one carrying private key material), PKCE verifiers and made-up codes and refresh tokens
 * never appear in an audit event, an `onError` report (message, stack, own properties and causes), a logger line, a
 * store call (keys and values: the store holds digests), a `Location` or `WWW-Authenticate` header, an error body,
 * or an exported span (name, attributes, events) or metric attribute.
 *
 * The suite-wide scan (test/setup/suite-audit.ts) looks for 43-character and JWT shapes in events, logs and reports
 * of every file; this one knows the exact values, of any shape, and reads spans, metrics, headers and the store too.
 */
import { generate, generateSecret } from 'otplib';
import { describe, expect, it } from 'vitest';
import { createSentinel, MemoryStore, type SentinelEvent, type SentinelOptions, type SentinelResponse } from '../src/index.js';
import { deviceApps, personDecides, poll, requestCodes } from './helpers/device-drive.js';
import { call, csrfOf, jsonOf, LOGIN_PATH, openLogin, postForm, postLogin, startInteraction, stepCookie } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { assertionAuth, clientKey, dpopProof, KEYED_CLIENT_ID, KEYED_REDIRECT_URI, keyedOptions } from './helpers/key-bound.js';
import { registerSuiteSDK } from './helpers/otel-sdk.js';
import { INITIAL_ACCESS_TOKEN, manageClient, postRegistration, registerClient } from './helpers/registration-client.js';

const sdk = registerSuiteSDK();

/** An error as a host's logger could write it: name, message, stack, own properties, and its causes. */
function reported(error: unknown, depth = 0): string {
  if (depth > 5) return '';
  if (!(error instanceof Error)) return JSON.stringify(error) ?? String(error);
  const own: Record<string, unknown> = {};
  for (const name of Object.getOwnPropertyNames(error)) own[name] = (error as unknown as Record<string, unknown>)[name];
  let fields: string;
  try {
    fields = JSON.stringify(own);
  } catch {
    fields = String(own);
  }
  return `${error.name}: ${error.message}\n${error.stack}\n${fields}\n${reported(error.cause, depth + 1)}`;
}

/** What one sentinel emits, as lines: events, reports, log lines, store calls, and the answers' headers and errors. */
interface Outputs {
  lines: string[];
  options: Partial<SentinelOptions>;
  see(response: SentinelResponse): SentinelResponse;
}

function outputs(): Outputs {
  const lines: string[] = [];
  const inner = new MemoryStore();
  // Every store call with its arguments: keys and values are digests and records, never a secret as presented.
  const store = new Proxy(inner, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        lines.push(`store ${String(property)} ${JSON.stringify(args)}`);
        return (value as (...given: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    lines,
    options: {
      store,
      onEvent: (event: SentinelEvent) => lines.push(`event ${JSON.stringify(event)}`),
      onError: (error) => lines.push(`error ${reported(error)}`),
      logger: { warn: (message) => lines.push(`log ${message}`) },
    },
    see(response) {
      lines.push(`headers ${String(response.headers.location ?? '')} ${String(response.headers['www-authenticate'] ?? '')}`);
      if (response.status >= 400) lines.push(`body ${response.status} ${String(response.body)}`);
      return response;
    },
  };
}

/** The exported spans and metric points, as lines. */
async function telemetry(): Promise<string[]> {
  const lines = sdk.spans().map((span) => `span ${span.name} ${JSON.stringify(span.attributes)} ${JSON.stringify(span.events)}`);
  for (const point of await sdk.collect()) lines.push(`metric ${point.metric} ${JSON.stringify(point.attributes)}`);
  return lines;
}

/** Each secret found in a line, named by its label and the start of the line (never the whole value). */
function leaks(lines: readonly string[], secrets: Record<string, string>): string[] {
  const found: string[] = [];
  for (const [label, secret] of Object.entries(secrets)) {
    for (const line of lines) if (line.includes(secret)) found.push(`${label} in ${line.slice(0, 60)}`);
  }
  return found;
}

/** Every emitted line, after checking that each kind the scan reads is there (an empty haystack finds nothing). */
async function emitted(seen: Outputs, kinds: readonly string[] = ['event', 'store', 'headers', 'span', 'metric']): Promise<string[]> {
  const lines = [...seen.lines, ...(await telemetry())];
  for (const kind of kinds)
    expect(
      lines.some((line) => line.startsWith(`${kind} `)),
      `some ${kind} line`,
    ).toBe(true);
  return lines;
}

describe('secrets in what the service emits', () => {
  it('the scan finds a planted value', () => {
    expect(leaks(['event {"reason":"x-planted-zz9-x"}', 'span a {}'], { planted: 'planted-zz9' })).toEqual([
      'planted in event {"reason":"x-planted-zz9-x"}',
    ]);
  });

  it('the device flow: no device code, access or refresh token', async () => {
    const seen = outputs();
    const sentinel = makeSentinel({ apps: deviceApps(), ...seen.options });
    const codes = await requestCodes(sentinel);
    seen.see(await poll(sentinel, codes.device_code));
    seen.see(await poll(sentinel, codes.device_code, { client_id: 'someone-else' }));
    seen.see(await poll(sentinel, `${codes.device_code}x`));
    seen.see(await personDecides(sentinel, codes.user_code, 'approve'));
    const tokens = jsonOf(seen.see(await poll(sentinel, codes.device_code)));
    seen.see(await poll(sentinel, codes.device_code));
    const lines = await emitted(seen);
    expect(
      leaks(lines, {
        'device code': codes.device_code,
        'access token': String(tokens.access_token),
        'refresh token': String(tokens.refresh_token),
      }),
    ).toEqual([]);
  });

  it('registration and management: no initial or registration access token, no client secret', async () => {
    const seen = outputs();
    const sentinel = makeSentinel({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN }, ...seen.options });
    const info = await registerClient(sentinel);
    seen.see(await postRegistration(sentinel, { grant_types: ['client_credentials'] }, { token: 'wrong-initial-token-zz9' }));
    seen.see(await manageClient(sentinel, 'GET', info));
    seen.see(await manageClient(sentinel, 'GET', info, { token: 'wrong-registration-token-zz9' }));
    const put = { client_id: info.client_id, client_secret: 'another-secret-in-put-zz9', grant_types: ['client_credentials'] };
    seen.see(await manageClient(sentinel, 'PUT', info, { body: put }));
    seen.see(await manageClient(sentinel, 'PUT', info, { body: { ...put, client_secret: info.client_secret, grant_types: ['nope'] } }));
    const rotated = jsonOf(seen.see(await manageClient(sentinel, 'POST', info, { suffix: '/secret' })));
    seen.see(await manageClient(sentinel, 'DELETE', info));
    const lines = await emitted(seen);
    expect(
      leaks(lines, {
        'initial access token': INITIAL_ACCESS_TOKEN,
        'wrong initial access token': 'wrong-initial-token-zz9',
        'wrong registration access token': 'wrong-registration-token-zz9',
        'client secret in an update': 'another-secret-in-put-zz9',
        'registration access token': info.registration_access_token,
        'client secret': String(info.client_secret),
        'rotated client secret': String(rotated.client_secret),
      }),
    ).toEqual([]);
  });

  it('the TOTP step: no TOTP secret or code, no recovery code, no typed password', async () => {
    const seen = outputs();
    const secret = generateSecret();
    const sentinel = makeSentinel({
      users: {
        authenticate: async ({ username, password }) =>
          username === USERNAME && password === PASSWORD ? { id: USER_ID, secondFactor: 'totp' } : null,
        totpSecret: async () => secret,
        recover: async ({ code }) => code === 'recovery-right-zz9',
      },
      ...seen.options,
    });
    const { interaction } = await startInteraction(sentinel);
    const loginCsrf = await openLogin(sentinel, interaction);
    seen.see(await postLogin(sentinel, interaction, { csrf_token: loginCsrf, username: USERNAME, password: 'wrong-password-zz9' }));
    seen.see(await postLogin(sentinel, interaction, { csrf_token: loginCsrf, username: 'password-as-username-zz9', password: PASSWORD }));
    const passed = seen.see(
      await postLogin(sentinel, interaction, {
        csrf_token: await openLogin(sentinel, interaction),
        username: USERNAME,
        password: PASSWORD,
      }),
    );
    const cookie = stepCookie(passed);
    const path = `${LOGIN_PATH}/totp`;
    const query = new URLSearchParams({ interaction });
    const csrf = csrfOf((await call(sentinel, { path, query, headers: { cookie } })).body);
    const right = await generate({ secret });
    const wrong = right === '123456' ? '654321' : '123456';
    const post = async (fields: Record<string, string>) =>
      seen.see(
        await postForm(sentinel, path, new URLSearchParams({ csrf_token: csrf, ...fields }).toString(), { query, headers: { cookie } }),
      );
    await post({ code: wrong });
    await post({ recovery_code: 'recovery-wrong-zz9' });
    expect((await post({ code: right })).status).toBe(303);
    const lines = await emitted(seen);
    expect(
      leaks(lines, {
        'TOTP secret': secret,
        'TOTP code': `"${right}"`,
        'wrong TOTP code': `"${wrong}"`,
        password: PASSWORD,
        'wrong password': 'wrong-password-zz9',
        'password typed as the username': 'password-as-username-zz9',
        'wrong recovery code': 'recovery-wrong-zz9',
        'step cookie': cookie.slice(cookie.indexOf('=') + 1),
      }),
    ).toEqual([]);
  });

  it('a failing users.authenticate hook: its report carries no typed password', async () => {
    const seen = outputs();
    const sentinel = makeSentinel({
      users: {
        authenticate: async () => {
          throw new Error('the user directory is down');
        },
      },
      ...seen.options,
    });
    const { interaction } = await startInteraction(sentinel);
    const csrf = await openLogin(sentinel, interaction);
    const refused = seen.see(
      await postLogin(sentinel, interaction, { csrf_token: csrf, username: 'typed-user-zz9', password: 'typed-password-zz9' }),
    );
    expect(refused.status).toBe(500);
    const lines = await emitted(seen, ['error', 'store', 'span']);
    expect(leaks(lines, { 'typed password': 'typed-password-zz9' })).toEqual([]);
  });

  it('pushed requests, client assertions and DPoP: no assertion, proof, private key, verifier, code or refresh token', async () => {
    const seen = outputs();
    const key = await clientKey();
    const sentinel = createSentinel(keyedOptions(key, {}, seen.options));
    const parPath = `/sentinel/api/account/${ACCOUNT}/par`;
    const tokenPath = `/sentinel/api/account/${ACCOUNT}/token`;
    const secrets: Record<string, string> = { 'private key': String(key.privateJwk.d) };
    const pushed = {
      response_type: 'code',
      client_id: KEYED_CLIENT_ID,
      redirect_uri: KEYED_REDIRECT_URI,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      state: 'st',
    };
    const auth = await assertionAuth(key);
    const proof = await dpopProof(key, { htm: 'POST', htu: `http://localhost${parPath}` });
    Object.assign(secrets, { assertion: auth.client_assertion, proof });
    expect(
      seen.see(await postForm(sentinel, parPath, new URLSearchParams({ ...pushed, ...auth }).toString(), { headers: { dpop: proof } }))
        .status,
    ).toBe(201);
    // Replayed, a proof carrying the private key, an expired assertion, one for another audience, one that is no JWT.
    seen.see(await postForm(sentinel, parPath, new URLSearchParams({ ...pushed, ...auth }).toString(), { headers: { dpop: proof } }));
    const privateProof = await dpopProof(key, { htm: 'POST', htu: `http://localhost${parPath}` }, { jwk: { ...key.privateJwk } });
    const second = await assertionAuth(key);
    Object.assign(secrets, { 'proof with a private key': privateProof, 'second assertion': second.client_assertion });
    seen.see(
      await postForm(sentinel, parPath, new URLSearchParams({ ...pushed, ...second }).toString(), { headers: { dpop: privateProof } }),
    );
    const cc = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      postForm(sentinel, tokenPath, new URLSearchParams({ grant_type: 'client_credentials', ...fields }).toString(), { headers });
    const expired = await assertionAuth(key, { exp: Math.floor(Date.now() / 1000) - 100 });
    const elsewhere = await assertionAuth(key, { aud: 'https://elsewhere.example' });
    Object.assign(secrets, { 'expired assertion': expired.client_assertion, 'assertion for elsewhere': elsewhere.client_assertion });
    seen.see(await cc(expired));
    seen.see(await cc(elsewhere));
    seen.see(await cc({ client_assertion_type: auth.client_assertion_type as string, client_assertion: 'no.jwt-assertion-zz9' }));
    secrets['assertion that is no JWT'] = 'no.jwt-assertion-zz9';
    const code = { code: 'made-up-code-zz9', code_verifier: `verifier-zz9-${'v'.repeat(50)}`, ...(await assertionAuth(key)) };
    seen.see(await postForm(sentinel, tokenPath, new URLSearchParams({ grant_type: 'authorization_code', ...code }).toString()));
    const refresh = { refresh_token: 'made-up-refresh-zz9', ...(await assertionAuth(key)) };
    const grant = new URLSearchParams({ grant_type: 'refresh_token', ...refresh }).toString();
    seen.see(await postForm(sentinel, tokenPath, grant, { headers: { dpop: 'not-a-proof-zz9' } }));
    Object.assign(secrets, {
      code: code.code,
      verifier: code.code_verifier,
      'refresh token': refresh.refresh_token,
      'proof that is no JWT': 'not-a-proof-zz9',
    });
    const lines = await emitted(seen);
    expect(leaks(lines, secrets)).toEqual([]);
  });
});
