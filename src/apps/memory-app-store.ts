/**
 * The in-memory application registry behind the `apps` option and `registerApp()` without an `appStore`.
 */
import type { App, AppPatch, AppStore } from './app.js';
import { assertAppFields } from './app-fields.js';
import { applyAppPatch } from './app-patch.js';
import { MAX_RETIRING_SECRETS } from './client-secrets.js';

/**
 * The default {@link AppStore}: the apps of the options, in memory, keyed by account and client id (RFC 6749 §2.2:
 * a client id is unique within its authorization server, here within its account).
 *
 * @example
 * const appStore = new MemoryAppStore([app]);
 * appStore.findApp('123456', app.clientId); // app
 */
export class MemoryAppStore implements AppStore {
  readonly #apps = new Map<string, App>();
  readonly #accounts = new Map<string, number>();
  /** Keys of the disabled apps: kept, listed, unknown to `findApp`. */
  readonly #disabled = new Set<string>();

  constructor(apps: readonly App[] = []) {
    for (const app of apps) this.saveApp(app);
  }

  findApp(accountId: string, clientId: string): App | null {
    const key = `${accountId}\u0000${clientId}`;
    return this.#disabled.has(key) ? null : (this.#apps.get(key) ?? null);
  }

  hasAccount(accountId: string): boolean {
    return this.#accounts.has(accountId);
  }

  saveApp(app: App): void {
    // Refused, as PostgreSQL refuses it: a misspelled field (`requireDpop`) kept beside the app would leave it
    // without the demand the host meant, and nothing would say so.
    assertAppFields(app);
    const key = `${app.accountId}\u0000${app.clientId}`;
    if (!this.#apps.has(key)) this.#accounts.set(app.accountId, (this.#accounts.get(app.accountId) ?? 0) + 1);
    // `disabled` is the registry's state (kept apart, as PostgreSQL keeps its column), not a field an app is saved
    // with: a copy taken from listApps must not come back from findApp marked disabled while it works.
    const { disabled: _state, ...stored } = app;
    this.#apps.set(key, stored);
  }

  listApps(accountId: string): App[] {
    const listed: App[] = [];
    for (const [key, app] of this.#apps) {
      if (app.accountId === accountId) listed.push(this.#disabled.has(key) ? { ...app, disabled: true } : app);
    }
    return listed;
  }

  updateApp(app: App): boolean {
    assertAppFields(app);
    // A disabled app exists too (as in PostgreSQL): it is updated and stays disabled, a flag kept apart from the app.
    const key = `${app.accountId}\u0000${app.clientId}`;
    const current = this.#apps.get(key);
    if (current === undefined) return false;
    const { disabled: _listed, ...metadata } = app;
    // Metadata only: the secrets and the registration access token stay those of the stored app.
    this.#apps.set(key, {
      ...metadata,
      clientSecretHash: current.clientSecretHash,
      retiringSecrets: current.retiringSecrets,
      registrationAccessTokenHash: current.registrationAccessTokenHash,
      createdAt: current.createdAt,
    });
    return true;
  }

  patchApp(accountId: string, clientId: string, update: (current: App) => AppPatch): App | null {
    // Synchronous from read to write: nothing can change the app in between. A disabled app is patched too, and
    // shown to `update` as disabled (the AppStore contract); the flag itself is kept apart, not stored in the app.
    const key = `${accountId}\u0000${clientId}`;
    const current = this.#apps.get(key);
    if (current === undefined) return null;
    const disabled = this.#disabled.has(key);
    const next = applyAppPatch(current, update(disabled ? { ...current, disabled: true } : current));
    this.#apps.set(key, next);
    return disabled ? { ...next, disabled: true } : next;
  }

  /** Disables an app (see `AppStore.disableApp`); `false` when unknown. */
  disableApp(accountId: string, clientId: string): boolean {
    const key = `${accountId}\u0000${clientId}`;
    if (!this.#apps.has(key)) return false;
    this.#disabled.add(key);
    return true;
  }

  /** Enables a disabled app again; `false` when unknown. */
  enableApp(accountId: string, clientId: string): boolean {
    const key = `${accountId}\u0000${clientId}`;
    if (!this.#apps.has(key)) return false;
    this.#disabled.delete(key);
    return true;
  }

  /** The app while it is disabled (see `AppStore.findDisabledApp`); `null` when enabled or unknown. */
  findDisabledApp(accountId: string, clientId: string): App | null {
    const key = `${accountId}\u0000${clientId}`;
    const app = this.#disabled.has(key) ? this.#apps.get(key) : undefined;
    return app === undefined ? null : { ...app, disabled: true };
  }

  deleteApp(accountId: string, clientId: string): boolean {
    this.#disabled.delete(`${accountId}\u0000${clientId}`);
    if (!this.#apps.delete(`${accountId}\u0000${clientId}`)) return false;
    const left = (this.#accounts.get(accountId) ?? 1) - 1;
    if (left === 0) this.#accounts.delete(accountId);
    else this.#accounts.set(accountId, left);
    return true;
  }

  rotateClientSecret(accountId: string, clientId: string, secretHash: string, overlapSeconds: number): App | null {
    const current = this.#apps.get(`${accountId}\u0000${clientId}`);
    if (current === undefined) return null;
    // Not rounded: a rotation with a 1-second overlap must not lose up to a second of it.
    const now = Date.now() / 1000;
    // No overlap ends every earlier secret, also one still in an earlier rotation's overlap (the way out of a leak).
    // A secret of an earlier rotation ends with this overlap at the latest: "the previous secret keeps working for N
    // seconds" must not leave an older one working for the rest of a longer overlap.
    const until = now + overlapSeconds;
    const retiring =
      overlapSeconds > 0
        ? (current.retiringSecrets ?? [])
            .filter((secret) => secret.expiresAt > now)
            .map((secret) => (secret.expiresAt > until ? { ...secret, expiresAt: until } : secret))
        : [];
    if (current.clientSecretHash !== undefined && overlapSeconds > 0) {
      retiring.push({ hash: current.clientSecretHash, expiresAt: until });
    }
    // Oldest first, the one just replaced last: at most MAX_RETIRING_SECRETS stay, the oldest go.
    const rotated: App = { ...current, clientSecretHash: secretHash, retiringSecrets: retiring.slice(-MAX_RETIRING_SECRETS) };
    this.#apps.set(`${accountId}\u0000${clientId}`, rotated);
    return rotated;
  }
}
