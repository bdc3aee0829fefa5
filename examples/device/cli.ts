/**
 * A command-line tool that signs its user in with the device flow (RFC 8628), using nothing but openid-client 6's
 * device functions against the service's discovered metadata: it asks for codes, tells the person where to enter the
 * user code, polls until they approve or deny on their phone or laptop, and says what came of it. It never prints a
 * token: a terminal's scroll-back and a CI log are not places for one.
 *
 *   SENTINEL_ISSUER=https://id.example.com/sentinel/api/account/123456 \
 *   SENTINEL_DEVICE_CLIENT_ID=acme-cli npm run example:device
 *
 * Without those two it signs in to the demo server of `npm start` (http://localhost:3000, app `demo-cli`).
 *
 * The app must be registered for the grant (`grantTypes: ['urn:ietf:params:oauth:grant-type:device_code',
 * 'refresh_token']`, `tokenEndpointAuthMethod: 'none'`). An http issuer is accepted on a loopback host only, for
 * development; anything else must be https.
 */
import { pathToFileURL } from 'node:url';
import * as client from 'openid-client';

/** What the tool needs to know; `say` is where its lines go (the terminal, or a test). */
export interface DeviceSignInOptions {
  /** The account's issuer, whose metadata is at `{issuer}/.well-known/openid-configuration`. */
  issuer: URL;
  clientId: string;
  scope?: string | undefined;
  say: (line: string) => void;
  /** Aborts the polling (Ctrl-C). */
  signal?: AbortSignal | undefined;
}

/** How the sign-in ended. */
export type DeviceSignInResult =
  | { ok: true; subject: string | undefined; scope: string | undefined; expiresIn: number | undefined; refreshable: boolean }
  | { ok: false; error: string; message: string };

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** What to tell the person for each way the device flow can end without tokens (RFC 8628 §3.5). */
const ENDINGS: Record<string, string> = {
  access_denied: 'The sign-in was declined in the browser. Nothing was granted.',
  expired_token: 'The code expired before anyone entered it. Run the command again for a new one.',
  invalid_grant: 'The service no longer knows this code (already used, or issued to another app).',
  unauthorized_client: 'This app is not registered for the device flow.',
  invalid_client: 'The service does not know this app.',
};

function errorCodeOf(error: unknown): string {
  if (error instanceof client.ResponseBodyError) return error.error;
  if (error instanceof Error && error.name === 'AbortError') return 'aborted';
  return 'unreachable';
}

/**
 * Runs the device flow once: discovery, the device authorization request, the instructions for the person, and the
 * polling that openid-client paces by the service's `interval` (and its `slow_down`).
 * @example
 * const result = await deviceSignIn({ issuer: new URL('https://id.example.com/sentinel/api/account/123456'), clientId: 'acme-cli', say: console.log });
 */
export async function deviceSignIn(options: DeviceSignInOptions): Promise<DeviceSignInResult> {
  const { issuer, say } = options;
  // openid-client refuses plain http unless told otherwise; only a development service on this machine gets that.
  const insecure = issuer.protocol === 'http:' && LOOPBACK.has(issuer.hostname);
  if (issuer.protocol !== 'https:' && !insecure) {
    return { ok: false, error: 'invalid_issuer', message: 'The issuer must be https (http only on localhost).' };
  }
  try {
    const config = await client.discovery(
      issuer,
      options.clientId,
      undefined,
      client.None(),
      insecure ? { execute: [client.allowInsecureRequests] } : undefined,
    );
    const codes = await client.initiateDeviceAuthorization(config, { scope: options.scope ?? 'openid offline_access' });
    say(`To sign in, open ${codes.verification_uri} and enter the code ${codes.user_code}`);
    if (codes.verification_uri_complete !== undefined) say(`or open ${codes.verification_uri_complete}`);
    say(`The code works for ${Math.round(codes.expires_in / 60)} minutes. Waiting…`);
    const tokens = await client.pollDeviceAuthorizationGrant(config, codes, undefined, { signal: options.signal });
    return {
      ok: true,
      subject: tokens.claims()?.sub,
      scope: tokens.scope,
      expiresIn: tokens.expiresIn(),
      refreshable: tokens.refresh_token !== undefined,
    };
  } catch (error) {
    const code = errorCodeOf(error);
    const message =
      ENDINGS[code] ??
      (code === 'aborted'
        ? 'Stopped.'
        : `The sign-in failed: ${error instanceof client.ResponseBodyError ? (error.error_description ?? error.error) : String(error)}`);
    return { ok: false, error: code, message };
  }
}

/**
 * The command: reads its settings from the environment (SENTINEL_ISSUER, SENTINEL_DEVICE_CLIENT_ID, SENTINEL_SCOPE),
 * prints the outcome, exits 0 when signed in and 1 when not.
 */
async function main(): Promise<void> {
  // The defaults are the demo servers' (`npm start`): their account and their device-flow app.
  const issuer = process.env.SENTINEL_ISSUER ?? 'http://localhost:3000/sentinel/api/account/123456';
  const clientId = process.env.SENTINEL_DEVICE_CLIENT_ID ?? 'demo-cli';
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  const result = await deviceSignIn({
    issuer: new URL(issuer),
    clientId,
    scope: process.env.SENTINEL_SCOPE,
    say: (line) => console.log(line),
    signal: abort.signal,
  });
  if (result.ok) {
    const refresh = result.refreshable ? ', with a refresh token' : '';
    console.log(
      `Signed in as ${result.subject ?? '(no ID token)'}: scope "${result.scope ?? ''}", expires in ${result.expiresIn ?? '?'} s${refresh}.`,
    );
  } else {
    console.log(`Not signed in (${result.error}): ${result.message}`);
  }
  process.exitCode = result.ok ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
