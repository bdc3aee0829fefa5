/**
 * `sentinel-idp issuers add|list|remove|history --database <url> --account <id>`: the brand identity providers an account
 * trusts (RFC 7523 JWT bearer, RFC 8693 token exchange), kept in the PostgreSQL registry beside its apps. Without a
 * PostgreSQL registry there is nothing to manage: the `trustedIssuers` option is the list.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type TrustedIssuer, trustedIssuerKeySetProblem } from '../trusted-issuers/trusted-issuer.js';
import type { TrustedIssuerChangeRecord } from '../postgres/trusted-issuer-rows.js';
import { isConfigurationError } from '../errors.js';
import { cliActor, DATABASE_OPTIONS, withDatabase } from './database.js';
import type { CLIIO } from './io.js';
import { terminalJSON, terminalText } from './terminal-text.js';
import { type OptionTable, optionalString, parseArguments, requireAccountId, requireString, UsageError } from './usage.js';

/** Help text of `issuers`. */
export const ISSUERS_HELP = `Usage: sentinel-idp issuers add|list|remove|history [options]

  issuers add --database <url> --account <id> --issuer <iss> (--jwks-uri <url> | --jwks-file <path>)
              [--audience <aud>] [--consumer-id-claim <claim>]
                             trust a brand identity provider's JWTs for the account's consumers
                             (adding the same --issuer again replaces its entry; --jwks-uri is https)
  issuers list --database <url> --account <id>
                             the account's trusted issuers
  issuers remove --database <url> --account <id> --issuer <iss>
                             stop trusting the issuer: its JWTs are refused from the next request on
                             (unless the service's trustedIssuers option names it too: that entry wins)
  issuers history --database <url> --account <id> --issuer <iss>
                             who added, replaced or removed the issuer, and when

Without a PostgreSQL registry, trusted issuers are the trustedIssuers option. An issuer that option
names for the account is the option's: the registry's entry of the same issuer is never read, so adding,
replacing or removing it here changes nothing for that issuer. Keep each issuer in one place.

Options of every command:
  --database <url>  the registry: postgres://user@host:5432/dbname (the password from
                    PGPASSWORD or ~/.pgpass: arguments show in ps and shell history)
  --account <id>    platform account (site) id
  --json            machine-readable output
  -h, --help        show this help
`;

const OPTIONS = {
  ...DATABASE_OPTIONS,
  issuer: { type: 'string' },
  'jwks-uri': { type: 'string' },
  'jwks-file': { type: 'string' },
  audience: { type: 'string' },
  'consumer-id-claim': { type: 'string' },
} as const;

type Subcommand = 'add' | 'list' | 'remove' | 'history';

function issuerLine(entry: TrustedIssuer): string {
  const keys = entry.jwksUri ?? `inline JWKS (${entry.jwks?.keys.length ?? 0} keys)`;
  const extra = [
    ...(entry.audience === undefined ? [] : [`audience ${entry.audience}`]),
    ...(entry.consumerIdClaim === undefined ? [] : [`consumer id from ${entry.consumerIdClaim}`]),
  ];
  // Stored text, not the CLI's: the entry's audience and claim may hold any character, its issuer C1 and bidi ones.
  return `${terminalText(`${entry.issuer}  ${keys}${extra.length === 0 ? '' : `  (${extra.join(', ')})`}`)}\n`;
}

function changeText(change: TrustedIssuerChangeRecord): string {
  return `${change.at.toISOString()}  ${change.action.padEnd(9)} by ${terminalText(change.actor)}\n`;
}

/** The inline key set of `--jwks-file`: a JWK Set document, read whole. */
async function jwksFromFile(path: string, command: string): Promise<TrustedIssuer['jwks']> {
  let text: string;
  try {
    text = await readFile(resolve(path), 'utf8');
  } catch {
    throw new UsageError('--jwks-file cannot be read', command);
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && Array.isArray((parsed as { keys?: unknown }).keys)) {
      return parsed as TrustedIssuer['jwks'];
    }
  } catch {
    // reported below: the same message for any content that is not a JWK Set
  }
  throw new UsageError('--jwks-file must hold a JWK Set ({"keys": [...]})', command);
}

async function entryFrom(values: Record<string, unknown>, accountId: string, issuer: string, command: string): Promise<TrustedIssuer> {
  const options = values as Parameters<typeof optionalString>[0];
  const jwksUri = optionalString(options, 'jwks-uri', command);
  const jwksFile = optionalString(options, 'jwks-file', command);
  if ((jwksUri === undefined) === (jwksFile === undefined)) throw new UsageError('give exactly one of --jwks-uri and --jwks-file', command);
  // The registry serves every instance, and the CLI cannot see their options: a plain http URL, which an instance
  // fetches only with clientJwks.allowPrivateAddresses (development), would fail every fetch of a production one.
  if (jwksUri !== undefined && trustedIssuerKeySetProblem({ accountId, issuer, jwksUri }, false) !== null) {
    throw new UsageError(`--jwks-uri of ${issuer} must be an https URL (a local issuer's keys: --jwks-file)`, command);
  }
  const audience = optionalString(options, 'audience', command);
  const consumerIdClaim = optionalString(options, 'consumer-id-claim', command);
  return {
    accountId,
    issuer,
    ...(jwksUri === undefined ? {} : { jwksUri }),
    ...(jwksFile === undefined ? {} : { jwks: await jwksFromFile(jwksFile, command) }),
    ...(audience === undefined ? {} : { audience }),
    ...(consumerIdClaim === undefined ? {} : { consumerIdClaim }),
  };
}

function runner(sub: Subcommand) {
  const command = `issuers ${sub}`;
  return async (argv: readonly string[], io: CLIIO): Promise<number> => {
    const { database, account, json, help, issuer } = OPTIONS;
    const table: OptionTable =
      sub === 'add' ? { ...OPTIONS } : sub === 'list' ? { database, account, json, help } : { database, account, json, help, issuer };
    const values = parseArguments(argv, table, command);
    if (values.help === true) {
      io.stdout(ISSUERS_HELP);
      return 0;
    }
    const accountId = requireAccountId(values, command);
    const iss = sub === 'list' ? '' : requireString(values, 'issuer', command);
    const entry = sub === 'add' ? await entryFrom(values, accountId, iss, command) : undefined;
    const asJSON = values.json === true;
    return withDatabase(values, command, io, async (store) => {
      if (entry !== undefined) {
        let action: 'added' | 'replaced';
        try {
          action = await store.saveTrustedIssuer(entry, cliActor());
        } catch (error) {
          // The entry is wrong, not the database: a usage error naming the field, nothing written.
          if (isConfigurationError(error)) throw new UsageError(error.message.replace(/^sentinel-idp: /, ''), command);
          throw error;
        }
        if (asJSON) io.stdout(`${JSON.stringify({ action, ...entry })}\n`);
        else io.stdout(`${action === 'added' ? 'Trusted' : 'Replaced'} ${iss} for account ${accountId}.\n`);
        return 0;
      }
      if (sub === 'list') {
        const issuers = await store.listTrustedIssuers(accountId);
        if (asJSON) io.stdout(`${terminalJSON(issuers)}\n`);
        else if (issuers.length === 0) io.stdout(`No trusted issuers in account ${accountId}.\n`);
        else for (const found of issuers) io.stdout(issuerLine(found));
        return 0;
      }
      if (sub === 'history') {
        const changes = await store.listTrustedIssuerChanges(accountId, iss);
        if (asJSON) {
          io.stdout(
            `${terminalJSON(
              changes.map((change) => ({ at: change.at.toISOString(), actor: change.actor, action: change.action, detail: change.detail })),
            )}\n`,
          );
        } else io.stdout(changes.length === 0 ? `No changes of ${iss} in account ${accountId}.\n` : changes.map(changeText).join(''));
        return 0;
      }
      if (!(await store.deleteTrustedIssuer(accountId, iss, cliActor()))) {
        io.stderr(`sentinel-idp: account ${accountId} does not trust ${iss}\n`);
        return 1;
      }
      if (asJSON) io.stdout(`${JSON.stringify({ removed: true, issuer: iss })}\n`);
      else io.stdout(`Removed ${iss} from account ${accountId}.\n`);
      return 0;
    });
  };
}

/**
 * The `issuers` subcommands, by name.
 * @example await ISSUERS_COMMANDS.list(['--database', url, '--account', '123456'], io);
 */
export const ISSUERS_COMMANDS = {
  add: runner('add'),
  list: runner('list'),
  remove: runner('remove'),
  history: runner('history'),
};
