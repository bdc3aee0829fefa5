/**
 * Every change to the app registry made through the service is an audit event: `app.registered` (RFC 7591 and
 * `registerApp()`), `app.updated` with the names of what changed, `app.secret_rotated` and `app.deleted` (RFC 7592),
 * each naming the actor the registry's change log records, on the in-memory registry and on PostgreSQL. A refused
 * change emits none. No event carries a secret, a secret's hash or a registration access token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sentinel, SentinelEvent } from '../src/index.js';
import { PostgresAppStore } from '../src/postgres/index.js';
import { jsonOf } from './helpers/direct-flow.js';
import { verifyClientSecret } from '../src/apps/client-secrets.js';
import { contextOf } from '../src/http/context.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { requirePostgres, sharedPostgres, throwawayDatabase } from './helpers/postgres.js';
import { INITIAL_ACCESS_TOKEN, manageClient, postRegistration, registerClient } from './helpers/registration-client.js';

// What a generated secret, token or hash digest looks like (test/setup/suite-audit.ts scans for the same).
const SECRET_SHAPE = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/;

const REGISTRY_TYPES = new Set(['app.registered', 'app.updated', 'app.secret_rotated', 'app.deleted']);

function registryEvents(events: SentinelEvent[]): SentinelEvent[] {
  return events.filter((event) => REGISTRY_TYPES.has(event.type));
}

/** The `onEvent` of a service under test: records each event (and may throw, to play an audit sink that fails). */
type OnEvent = (event: SentinelEvent) => void;

function lifecycle(name: string, build: (onEvent: OnEvent, onError?: (error: unknown) => void) => Sentinel) {
  describe(name, () => {
    it('registration, update, rotation and deletion over HTTP each emit one event, without secrets', async () => {
      const events: SentinelEvent[] = [];
      const sentinel = build((event) => events.push(event));
      const info = await registerClient(sentinel, { grant_types: ['client_credentials'], client_name: 'Before' });
      expect(registryEvents(events)).toEqual([
        expect.objectContaining({
          type: 'app.registered',
          accountId: ACCOUNT,
          clientId: info.client_id,
          actor: 'registration-endpoint',
          outcome: 'success',
          ip: '203.0.113.7',
        }),
      ]);

      // Refused changes are not changes.
      const refused = await manageClient(sentinel, 'PUT', info, { body: { client_id: info.client_id, client_name: 'Acme\u202E' } });
      expect(refused.status).toBe(400);
      expect(registryEvents(events)).toHaveLength(1);

      const updated = await manageClient(sentinel, 'PUT', info, {
        body: { client_id: info.client_id, grant_types: ['client_credentials'], client_name: 'After', scope: 'messages' },
      });
      expect(updated.status, updated.body).toBe(200);
      const rotated = await manageClient(sentinel, 'POST', info, { suffix: '/secret' });
      expect(rotated.status, rotated.body).toBe(200);
      const newSecret = jsonOf(rotated).client_secret as string;
      expect((await manageClient(sentinel, 'DELETE', info)).status).toBe(204);

      expect(registryEvents(events).slice(1)).toEqual([
        expect.objectContaining({
          type: 'app.updated',
          clientId: info.client_id,
          actor: 'registration-endpoint',
          changed: ['name', 'scope'],
        }),
        expect.objectContaining({
          type: 'app.secret_rotated',
          clientId: info.client_id,
          actor: 'registration-endpoint',
          overlapSeconds: 600,
        }),
        expect.objectContaining({ type: 'app.deleted', clientId: info.client_id, actor: 'registration-endpoint' }),
      ]);

      const text = JSON.stringify(events);
      for (const secret of [info.client_secret as string, newSecret, info.registration_access_token]) expect(text).not.toContain(secret);
      expect(text).not.toMatch(SECRET_SHAPE);
      expect(text).not.toContain('sha256:');
    });

    it('registerApp() emits app.registered with the api actor', async () => {
      const events: SentinelEvent[] = [];
      const sentinel = build((event) => events.push(event));
      const { clientId, clientSecret } = await sentinel.registerApp({ accountId: ACCOUNT, grantTypes: ['client_credentials'] });
      expect(registryEvents(events)).toEqual([
        expect.objectContaining({ type: 'app.registered', accountId: ACCOUNT, clientId, actor: 'api', outcome: 'success' }),
      ]);
      expect(JSON.stringify(events)).not.toContain(clientSecret as string);
      expect(JSON.stringify(events)).not.toMatch(SECRET_SHAPE);
    });

    it('an onEvent that throws on app.registered: the saved app and its credentials are still answered, onError told', async () => {
      const errors: unknown[] = [];
      const sentinel = build(
        () => {
          throw new Error('audit sink down');
        },
        (error) => errors.push(error),
      );
      // A 500 would leave an app saved whose credentials, shown only in this answer, nobody got.
      const registered = await postRegistration(sentinel, { grant_types: ['client_credentials'] });
      expect(registered.status).toBe(201);
      const info = jsonOf(registered);
      expect(info.client_secret).toBeTypeOf('string');
      expect((await contextOf(sentinel).apps.findApp(ACCOUNT, info.client_id as string))?.clientId).toBe(info.client_id);
      expect(errors).toEqual([new Error('audit sink down')]);
    });

    it('registerApp() with an onEvent that throws: the secret is returned, onError told', async () => {
      const errors: unknown[] = [];
      const sentinel = build(
        () => {
          throw new Error('audit sink down');
        },
        (error) => errors.push(error),
      );
      const { clientId, clientSecret } = await sentinel.registerApp({ accountId: ACCOUNT, grantTypes: ['client_credentials'] });
      expect(clientSecret).toBeTypeOf('string');
      expect((await contextOf(sentinel).apps.findApp(ACCOUNT, clientId))?.clientId).toBe(clientId);
      expect(errors).toEqual([new Error('audit sink down')]);
    });

    it('an onEvent that throws on app.updated, app.secret_rotated and app.deleted: each change is answered, onError told', async () => {
      const errors: unknown[] = [];
      let failing = false;
      const sentinel = build(
        (event) => {
          if (failing) throw new Error(`audit sink down (${event.type})`);
        },
        (error) => errors.push(error),
      );
      const info = await registerClient(sentinel, { grant_types: ['client_credentials'], client_name: 'Before' });
      failing = true;
      const updated = await manageClient(sentinel, 'PUT', info, {
        body: { client_id: info.client_id, grant_types: ['client_credentials'], client_name: 'After' },
      });
      expect(updated.status, updated.body).toBe(200);
      expect(jsonOf(updated).client_name).toBe('After');
      // A 500 here would leave the new secret stored and the client without it: once the overlap ends, locked out.
      const rotated = await manageClient(sentinel, 'POST', info, { suffix: '/secret' });
      expect(rotated.status, rotated.body).toBe(200);
      const secret = jsonOf(rotated).client_secret as string;
      expect(verifyClientSecret(secret, (await contextOf(sentinel).apps.findApp(ACCOUNT, info.client_id))?.clientSecretHash)).toBe(true);
      expect((await manageClient(sentinel, 'DELETE', info)).status).toBe(204);
      expect(await contextOf(sentinel).apps.findApp(ACCOUNT, info.client_id)).toBeNull();
      expect(errors).toEqual([
        new Error('audit sink down (app.updated)'),
        new Error('audit sink down (app.secret_rotated)'),
        new Error('audit sink down (app.deleted)'),
      ]);
    });

    it('a registration refused for its metadata emits no registry event', async () => {
      const events: SentinelEvent[] = [];
      const sentinel = build((event) => events.push(event));
      expect((await postRegistration(sentinel, { redirect_uris: ['https:///cb'] })).status).toBe(400);
      expect(registryEvents(events)).toEqual([]);
    });
  });
}

const OPTIONS = { registration: { initialAccessToken: INITIAL_ACCESS_TOKEN, secretOverlapSeconds: 600 } };

lifecycle('on the in-memory registry', (onEvent, onError) => makeSentinel({ ...OPTIONS, onEvent, onError }));

const postgres = await sharedPostgres('hardening-registration-events');
describe.skipIf(postgres.skip)('on PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof throwawayDatabase>>;
  let store: PostgresAppStore;

  beforeAll(async () => {
    requirePostgres(postgres);
    database = await throwawayDatabase();
    store = new PostgresAppStore({ connectionString: database.url });
    await store.migrate();
  });

  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  lifecycle('PostgresAppStore', (onEvent, onError) => makeSentinel({ ...OPTIONS, apps: [], appStore: store, onEvent, onError }));

  it('the events name the actor the change log records', async () => {
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel({ ...OPTIONS, apps: [], appStore: store, onEvent: (event) => events.push(event) });
    const info = await registerClient(sentinel);
    const { clientId } = await sentinel.registerApp({ accountId: ACCOUNT, grantTypes: ['client_credentials'] });
    expect((await store.listChanges(ACCOUNT, info.client_id)).map((change) => change.actor)).toEqual(['registration-endpoint']);
    expect((await store.listChanges(ACCOUNT, clientId)).map((change) => change.actor)).toEqual(['api']);
    expect(registryEvents(events).map((event) => ('actor' in event ? event.actor : null))).toEqual(['registration-endpoint', 'api']);
  });
});
