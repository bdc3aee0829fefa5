/**
 * `sentinel-idp apps register`: creates the registration data of an application (platform-operations.md §2.2: installation id,
 * secret, redirection endpoints) for hosts that keep apps in their own store or in the `apps` option.
 */
import { assertValidApp } from '../apps/app-validation.js';
import { generateClientId, generateClientSecret, hashClientSecret } from '../apps/client-secrets.js';
import type { App, GrantType } from '../apps/app.js';
import { isConfigurationError } from '../errors.js';
import { saveRegisteredApp } from './apps-manage.js';
import type { CLIIO } from './io.js';
import { optionalString, parseArguments, requireAccountId, UsageError, type OptionValues } from './usage.js';

const COMMAND = 'apps register';
const GRANTS: readonly GrantType[] = ['authorization_code', 'client_credentials', 'refresh_token'];
// The same shape `createSentinel()` accepts for accountId: it becomes a path segment.

/** Help text of `apps register`. */
export const APPS_REGISTER_HELP = `Usage: sentinel-idp apps register --account <id> [--redirect-uri <uri>]... [--grant <type>]... [--public] [--name <name>]

Creates an application: a new client id (installation id), a new 256-bit client
secret, and the SHA-256 hash of that secret. Prints JSON on stdout:
  clientSecret      give it to the application; it is shown once and not stored
  clientSecretHash  store this (apps[].clientSecretHash or your AppStore)

Options:
  --account <id>        platform account (site) id; required
  --redirect-uri <uri>  registered redirect URI, matched exactly (repeatable; needed
                        for authorization_code). https, or http on localhost only
  --grant <type>        authorization_code | client_credentials | refresh_token
                        (repeatable). Default: all three when a redirect URI is
                        given, else client_credentials; public apps: authorization_code
                        and refresh_token
  --public              a public client (no secret; must use PKCE; no client_credentials)
  --name <name>         shown on the login page
  --database <url>      store the app in this PostgreSQL registry (sentinel-idp/postgres)
                        instead of printing the hash; prints the app and its secret
  --json                with --database: print JSON instead of text
  -h, --help            show this help

Example:
  sentinel-idp apps register --account 123456 --redirect-uri https://app.example.com/cb
`;

function stringList(values: OptionValues, name: string): string[] {
  const value = values[name];
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((item) => {
    if (typeof item !== 'string' || item === '') throw new UsageError(`--${name} needs a non-empty value`, COMMAND);
    return item;
  });
}

function grantsOf(values: OptionValues, hasRedirect: boolean, isPublic: boolean): GrantType[] {
  const given = stringList(values, 'grant');
  for (const grant of given) {
    if (!GRANTS.includes(grant as GrantType)) throw new UsageError(`--grant must be one of ${GRANTS.join(', ')}`, COMMAND);
  }
  if (given.length > 0) return [...new Set(given as GrantType[])];
  if (isPublic) return ['authorization_code', 'refresh_token'];
  return hasRedirect ? [...GRANTS] : ['client_credentials'];
}

/**
 * Runs `apps register`; returns the exit code.
 *
 * @example
 * await runAppsRegister(['--account', '123456', '--redirect-uri', 'https://app.example.com/cb'], io);
 */
export async function runAppsRegister(argv: readonly string[], io: CLIIO): Promise<number> {
  const values = parseArguments(
    argv,
    {
      account: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      grant: { type: 'string', multiple: true },
      public: { type: 'boolean' },
      name: { type: 'string' },
      database: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    COMMAND,
  );
  if (values.help === true) {
    io.stdout(APPS_REGISTER_HELP);
    return 0;
  }
  const accountId = requireAccountId(values, COMMAND);
  const isPublic = values.public === true;
  const redirectUris = stringList(values, 'redirect-uri');
  const clientSecret = isPublic ? undefined : generateClientSecret();
  const app: App = {
    accountId,
    clientId: generateClientId(),
    clientSecretHash: clientSecret === undefined ? undefined : hashClientSecret(clientSecret),
    redirectUris,
    grantTypes: grantsOf(values, redirectUris.length > 0, isPublic),
    tokenEndpointAuthMethod: isPublic ? 'none' : 'client_secret_basic',
    name: optionalString(values, 'name', COMMAND),
  };
  try {
    assertValidApp(app, 'app');
  } catch (error) {
    if (!isConfigurationError(error)) throw error;
    throw new UsageError(describeProblem(error.field, error.message), COMMAND);
  }
  if (values.database !== undefined) return saveRegisteredApp(values, app, clientSecret, io);
  const output = {
    accountId: app.accountId,
    clientId: app.clientId,
    ...(clientSecret === undefined ? {} : { clientSecret, clientSecretHash: app.clientSecretHash }),
    redirectUris: app.redirectUris,
    grantTypes: app.grantTypes,
    tokenEndpointAuthMethod: app.tokenEndpointAuthMethod,
    ...(app.name === undefined ? {} : { name: app.name }),
  };
  io.stdout(`${JSON.stringify(output, null, 2)}\n`);
  io.stderr(
    clientSecret === undefined
      ? 'Registered a public client: it has no secret and must use PKCE.\n'
      : 'Give clientSecret to the application now: it is not stored and cannot be shown again. Store clientSecretHash.\n',
  );
  return 0;
}

/** Rewords a registration problem in terms of the command's options. */
function describeProblem(field: string, message: string): string {
  const detail = message.replace(/^sentinel-idp: invalid option [^:]+: /, '');
  const uri = /^app\.redirectUris\[(\d+)\]$/.exec(field);
  if (uri !== null) return `--redirect-uri #${Number(uri[1]) + 1} ${detail}`;
  if (field === 'app.redirectUris') return `--redirect-uri is required: ${detail}`;
  if (field === 'app.grantTypes') return `--grant: ${detail}`;
  if (field === 'app.name') return `--name ${detail}`;
  return detail;
}
