/**
 * `sentinel-idp apps list|show|rotate-secret|delete|disable|enable --database <url> --account <id>`: the application registry in
 * PostgreSQL from the command line. Human-readable by default, `--json` for scripts. A new secret is printed once.
 */
import { generateClientSecret, hashClientSecret } from '../apps/client-secrets.js';
import type { App } from '../apps/app.js';
import type { AppChangeRecord } from '../postgres/change-log.js';
import type { PostgresAppStore } from '../postgres/app-store.js';
import { cliActor, DATABASE_OPTIONS, withDatabase } from './database.js';
import type { CLIIO } from './io.js';
import { terminalJSON, terminalText } from './terminal-text.js';
import { type OptionTable, optionalString, parseArguments, requireAccountId, requireString, UsageError } from './usage.js';

const DEFAULT_OVERLAP_SECONDS = 86_400;

/** Help text of the registry subcommands (also the help of `apps`). */
export const APPS_HELP = `Usage: sentinel-idp apps register|list|show|rotate-secret|delete|disable|enable [options]

  apps register --account <id> [--database <url>] …   create an app (see "apps register --help")
  apps list --database <url> --account <id>            the account's apps
  apps show --database <url> --account <id> --client <client id>
                                                       one app and its change log
  apps rotate-secret --database <url> --account <id> --client <client id> [--overlap <seconds>]
                                                       a new secret, printed once; the old one keeps
                                                       working for --overlap seconds (default 86400)
  apps delete --database <url> --account <id> --client <client id>
                                                       remove the app: its secrets, codes and refresh
                                                       tokens stop working at once
  apps disable|enable --database <url> --account <id> --client <client id>
                                                       like delete, but kept (listed, with its history)
                                                       and reversible with enable

Options of every command:
  --database <url>  the registry: postgres://user@host:5432/dbname (the password from
                    PGPASSWORD or ~/.pgpass: arguments show in ps and shell history)
  --account <id>    platform account (site) id
  --json            machine-readable output
  -h, --help        show this help
`;

function appJSON(app: App): Record<string, unknown> {
  return {
    accountId: app.accountId,
    clientId: app.clientId,
    name: app.name ?? null,
    redirectUris: app.redirectUris,
    grantTypes: app.grantTypes,
    tokenEndpointAuthMethod: app.tokenEndpointAuthMethod,
    scope: app.scope ?? null,
    createdAt: app.createdAt === undefined ? null : new Date(app.createdAt * 1000).toISOString(),
    retiringSecretsExpireAt: (app.retiringSecrets ?? []).map((secret) => new Date(secret.expiresAt * 1000).toISOString()),
    managedOverHttp: app.registrationAccessTokenHash !== undefined,
    disabled: app.disabled === true,
  };
}

function appText(app: App): string {
  const lines = [
    `client id:       ${app.clientId}`,
    `name:            ${app.name ?? '-'}`,
    `grant types:     ${app.grantTypes.join(', ')}`,
    `auth method:     ${app.tokenEndpointAuthMethod}`,
    `redirect URIs:   ${app.redirectUris.length === 0 ? '-' : app.redirectUris.join('\n                 ')}`,
    `scope:           ${app.scope ?? '-'}`,
    `created:         ${app.createdAt === undefined ? '-' : new Date(app.createdAt * 1000).toISOString()}`,
    ...(app.disabled === true ? ['status:          DISABLED'] : []),
  ];
  for (const secret of app.retiringSecrets ?? [])
    lines.push(`previous secret: valid until ${new Date(secret.expiresAt * 1000).toISOString()}`);
  return `${lines.join('\n')}\n`;
}

// The actor is whoever the writer named: a console change names its operator's user id, which the host's users chose
// and which may hold an escape sequence meant for the terminal of the operator reading the log here.
function changeText(change: AppChangeRecord): string {
  return `${change.at.toISOString()}  ${change.action.padEnd(15)} by ${terminalText(change.actor)}\n`;
}

const OPTIONS = { ...DATABASE_OPTIONS, client: { type: 'string' }, overlap: { type: 'string' } } as const;

type Subcommand = 'list' | 'show' | 'rotate-secret' | 'delete' | 'disable' | 'enable';

function runner(sub: Subcommand) {
  const command = `apps ${sub}`;
  return async (argv: readonly string[], io: CLIIO): Promise<number> => {
    const { database, account, json, help, client } = OPTIONS;
    const table: OptionTable =
      sub === 'list'
        ? { database, account, json, help }
        : sub === 'rotate-secret'
          ? { ...OPTIONS }
          : { database, account, json, help, client };
    const values = parseArguments(argv, table, command);
    if (values.help === true) {
      io.stdout(APPS_HELP);
      return 0;
    }
    const accountId = requireAccountId(values, command);
    const clientId = sub === 'list' ? '' : requireString(values, 'client', command);
    const overlapText = optionalString(values, 'overlap', command);
    // Digits only: Number() reads " " as 0, which would end the old secret at once, and "1e3" or "0x10" as numbers
    // the operator may not have meant.
    const overlapSeconds =
      overlapText === undefined ? DEFAULT_OVERLAP_SECONDS : /^\d{1,8}$/.test(overlapText) ? Number(overlapText) : Number.NaN;
    if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > 30 * 86_400) {
      throw new UsageError('--overlap must be a whole number of seconds from 0 to 2592000', command);
    }
    const asJSON = values.json === true;
    return withDatabase(values, command, io, async (store) => {
      if (sub === 'list') {
        const apps = await store.listApps(accountId);
        if (asJSON) io.stdout(`${terminalJSON(apps.map(appJSON))}\n`);
        else if (apps.length === 0) io.stdout(`No apps in account ${accountId}.\n`);
        else {
          for (const app of apps) {
            io.stdout(
              `${app.clientId}  ${app.grantTypes.join(',').padEnd(45)} ${app.disabled === true ? '[disabled] ' : ''}${app.name ?? ''}\n`,
            );
          }
        }
        return 0;
      }
      if (sub === 'disable' || sub === 'enable') {
        const done =
          sub === 'disable'
            ? await store.disableApp(accountId, clientId, cliActor())
            : await store.enableApp(accountId, clientId, cliActor());
        if (!done) return notFound(io, accountId, clientId);
        if (asJSON) io.stdout(`${JSON.stringify({ clientId, disabled: sub === 'disable' })}\n`);
        else io.stdout(`${sub === 'disable' ? 'Disabled' : 'Enabled'} ${clientId}.\n`);
        return 0;
      }
      if (sub === 'show') {
        const app = await registeredApp(store, accountId, clientId);
        if (app === null) return notFound(io, accountId, clientId);
        const changes = await store.listChanges(accountId, clientId);
        if (asJSON) {
          const history = changes.map((change) => ({ at: change.at.toISOString(), actor: change.actor, action: change.action }));
          io.stdout(`${terminalJSON({ ...appJSON(app), changes: history })}\n`);
        } else io.stdout(`${appText(app)}\nchanges:\n${changes.map(changeText).join('')}`);
        return 0;
      }
      if (sub === 'delete') {
        if (!(await store.deleteApp(accountId, clientId, cliActor()))) return notFound(io, accountId, clientId);
        if (asJSON) io.stdout(`${JSON.stringify({ deleted: true, clientId })}\n`);
        else io.stdout(`Deleted ${clientId}.\n`);
        return 0;
      }
      // A disabled app's secret is rotated too: disable, rotate, enable is the answer to a leaked secret.
      const existing = await registeredApp(store, accountId, clientId);
      if (existing === null) return notFound(io, accountId, clientId);
      if (existing.tokenEndpointAuthMethod === 'none') throw new UsageError('a public client has no secret to rotate', command);
      if (existing.tokenEndpointAuthMethod === 'private_key_jwt') {
        throw new UsageError('a private_key_jwt client authenticates with its keys and has no secret to rotate', command);
      }
      const clientSecret = generateClientSecret();
      const rotated = await store.rotateClientSecret(accountId, clientId, hashClientSecret(clientSecret), overlapSeconds, cliActor());
      if (rotated === null) return notFound(io, accountId, clientId);
      const until = overlapSeconds === 0 ? null : new Date(Date.now() + overlapSeconds * 1000).toISOString();
      if (asJSON) io.stdout(`${JSON.stringify({ clientId, clientSecret, previousSecretValidUntil: until })}\n`);
      else io.stdout(`client secret:   ${clientSecret}\nprevious secret: ${until === null ? 'no longer valid' : `valid until ${until}`}\n`);
      io.stderr('Give the new secret to the application now: it is not stored and cannot be shown again.\n');
      return 0;
    });
  };
}

/**
 * The app as the registry holds it, disabled or not: `findApp` answers for the service, which does not know a
 * disabled app, but the registry's commands manage it still.
 */
async function registeredApp(store: PostgresAppStore, accountId: string, clientId: string): Promise<App | null> {
  return (await store.listApps(accountId)).find((candidate) => candidate.clientId === clientId) ?? null;
}

function notFound(io: CLIIO, accountId: string, clientId: string): number {
  io.stderr(`sentinel-idp: no app ${clientId} in account ${accountId}\n`);
  return 1;
}

/**
 * The registry subcommands of `apps`, by name.
 * @example await APPS_DATABASE_COMMANDS.list(['--database', url, '--account', '123456'], io);
 */
export const APPS_DATABASE_COMMANDS = {
  list: runner('list'),
  show: runner('show'),
  'rotate-secret': runner('rotate-secret'),
  delete: runner('delete'),
  disable: runner('disable'),
  enable: runner('enable'),
};

/** Stores an app made by `apps register --database` and prints it; the secret is shown once. */
export async function saveRegisteredApp(
  values: Parameters<typeof withDatabase>[0],
  app: App,
  clientSecret: string | undefined,
  io: CLIIO,
): Promise<number> {
  await withDatabase(values, 'apps register', io, (store) =>
    store.saveApp({ ...app, createdAt: Math.floor(Date.now() / 1000) }, cliActor()),
  );
  if (values.json === true) {
    io.stdout(
      `${JSON.stringify({ ...appJSON(app), createdAt: undefined, ...(clientSecret === undefined ? {} : { clientSecret }) }, null, 2)}\n`,
    );
  } else {
    io.stdout(`${appText(app)}${clientSecret === undefined ? '' : `client secret:   ${clientSecret}\n`}`);
  }
  io.stderr(
    clientSecret === undefined
      ? 'Registered a public client: it has no secret and must use PKCE.\n'
      : 'Give the client secret to the application now: only its hash is stored and it cannot be shown again.\n',
  );
  return 0;
}
