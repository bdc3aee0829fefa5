/**
 * `sentinel-idp apps rotate-secret` on a disabled app, in process against a real PostgreSQL (a throwaway database):
 * disable, rotate, enable is how an operator answers a leaked secret, so the rotation must find the app the
 * service no longer knows, and the app comes back with the new secret only.
 */
import { describe, expect, it } from 'vitest';
import { generateClientSecret, hashClientSecret, verifyAppSecret } from '../src/apps/client-secrets.js';
import { APPS_DATABASE_COMMANDS } from '../src/cli/apps-manage.js';
import { ISSUERS_COMMANDS } from '../src/cli/issuers-manage.js';
import { sharedPostgres, useThrowawayAppStore } from './helpers/postgres.js';
import { capturedIO } from './helpers/cli-io.js';

const available = await sharedPostgres('cli-apps-disabled-postgres');

describe.skipIf(available.skip)('apps rotate-secret on a disabled app', () => {
  const registry = useThrowawayAppStore(available);

  it('rotates the secret of a disabled app, which stays disabled until enabled, then with the new secret only', async () => {
    const accountId = '777';
    const clientId = 'leaked';
    const leaked = generateClientSecret();
    await registry.store().saveApp({
      accountId,
      clientId,
      clientSecretHash: hashClientSecret(leaked),
      redirectUris: [],
      grantTypes: ['client_credentials'],
      tokenEndpointAuthMethod: 'client_secret_basic',
    });
    const db = ['--database', registry.url(), '--account', accountId, '--client', clientId];
    expect(await APPS_DATABASE_COMMANDS.disable(db, capturedIO())).toBe(0);

    const rotation = capturedIO();
    expect(await APPS_DATABASE_COMMANDS['rotate-secret']([...db, '--overlap', '0', '--json'], rotation), rotation.err).toBe(0);
    const { clientSecret } = JSON.parse(rotation.out) as { clientSecret: string };
    // Still disabled: the service does not know it.
    expect(await registry.store().findApp(accountId, clientId)).toBeNull();

    expect(await APPS_DATABASE_COMMANDS.enable(db, capturedIO())).toBe(0);
    const enabled = await registry.store().findApp(accountId, clientId);
    expect(verifyAppSecret(clientSecret, enabled)).toBe(true);
    expect(verifyAppSecret(leaked, enabled)).toBe(false);

    const shown = capturedIO();
    expect(await APPS_DATABASE_COMMANDS.show(db, shown)).toBe(0);
    expect(shown.out).toMatch(/disabled[\s\S]*secret-rotated[\s\S]*enabled/);
  });

  it('still answers "no app" for an app the registry does not hold', async () => {
    const missing = capturedIO();
    const db = ['--database', registry.url(), '--account', '777', '--client', 'nobody'];
    expect(await APPS_DATABASE_COMMANDS['rotate-secret'](db, missing)).toBe(1);
    expect(missing.err).toContain('no app nobody in account 777');
  });
});

describe.skipIf(available.skip)('registry output on a terminal', () => {
  const registry = useThrowawayAppStore(available);
  // A console operator's user id is the host's, which its users may have chosen: the console logs it as the actor.
  const actor = 'console:mallory\u001b]0;owned\u0007\u001b[2J\u009b1A\u202e';
  const raw = /[\u001b\u0007\u009b\u202e]/;

  it('escapes the control characters of a change log actor and of a trusted issuer in text and in JSON', async () => {
    const accountId = '778';
    await registry.store().saveApp(
      {
        accountId,
        clientId: 'shown',
        clientSecretHash: hashClientSecret(generateClientSecret()),
        redirectUris: [],
        grantTypes: ['client_credentials'],
        tokenEndpointAuthMethod: 'client_secret_basic',
      },
      { actor },
    );
    // A trusted issuer's fields take no control character (trusted-issuer.ts); a bidirectional override they may.
    const issuer = 'https://idp.brand.example/\u202egnp';
    await registry
      .store()
      .saveTrustedIssuer(
        { accountId, issuer, jwksUri: 'https://idp.brand.example/jwks', audience: 'aud\u202e', consumerIdClaim: 'sub\u202e' },
        { actor },
      );
    const db = ['--database', registry.url(), '--account', accountId];
    const runs: [(argv: readonly string[], io: ReturnType<typeof capturedIO>) => Promise<number>, string[]][] = [
      [APPS_DATABASE_COMMANDS.show, [...db, '--client', 'shown']],
      [APPS_DATABASE_COMMANDS.show, [...db, '--client', 'shown', '--json']],
      [ISSUERS_COMMANDS.list, db],
      [ISSUERS_COMMANDS.list, [...db, '--json']],
      [ISSUERS_COMMANDS.history, [...db, '--issuer', issuer]],
      [ISSUERS_COMMANDS.history, [...db, '--issuer', issuer, '--json']],
    ];
    for (const [run, argv] of runs) {
      const io = capturedIO();
      expect(await run(argv, io), io.err).toBe(0);
      expect(io.out, argv.join(' ')).not.toMatch(raw);
      expect(io.out).toMatch(/mallory|idp\.brand/);
      if (argv.includes('--json')) expect(() => JSON.parse(io.out)).not.toThrow();
    }
    const shown = capturedIO();
    await APPS_DATABASE_COMMANDS.show([...db, '--client', 'shown'], shown);
    expect(shown.out).toContain('by console:mallory\\u001b]0;owned\\u0007\\u001b[2J\\u009b1A\\u202e');
    const history = capturedIO();
    await ISSUERS_COMMANDS.history([...db, '--issuer', issuer, '--json'], history);
    // Still JSON that parses to what the registry holds.
    expect((JSON.parse(history.out) as { actor: string }[])[0]?.actor).toBe(actor);
    const listed = capturedIO();
    await ISSUERS_COMMANDS.list([...db, '--json'], listed);
    expect((JSON.parse(listed.out) as { issuer: string }[])[0]?.issuer).toBe(issuer);
  });
});
