/**
 * `sentinel-idp apps rotate-secret` on a disabled app, in process against a real PostgreSQL (a throwaway database):
 * disable, rotate, enable is how an operator answers a leaked secret, so the rotation must find the app the
 * service no longer knows, and the app comes back with the new secret only.
 */
import { describe, expect, it } from 'vitest';
import { generateClientSecret, hashClientSecret, verifyAppSecret } from '../src/apps/client-secrets.js';
import { APPS_DATABASE_COMMANDS } from '../src/cli/apps-manage.js';
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
