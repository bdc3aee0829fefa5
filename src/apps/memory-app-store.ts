/**
 * The in-memory application registry behind the `apps` option and `registerApp()` without an `appStore`.
 */
import type { App, AppPatch, AppStore } from './app.js';
import { applyAppPatch } from './app-patch.js';

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

  constructor(apps: readonly App[] = []) {
    for (const app of apps) this.saveApp(app);
  }

  findApp(accountId: string, clientId: string): App | null {
    return this.#apps.get(`${accountId}\u0000${clientId}`) ?? null;
  }

  hasAccount(accountId: string): boolean {
    return this.#accounts.has(accountId);
  }

  saveApp(app: App): void {
    const key = `${app.accountId}\u0000${app.clientId}`;
    if (!this.#apps.has(key)) this.#accounts.set(app.accountId, (this.#accounts.get(app.accountId) ?? 0) + 1);
    this.#apps.set(key, app);
  }

  listApps(accountId: string): App[] {
    return [...this.#apps.values()].filter((app) => app.accountId === accountId);
  }

  updateApp(app: App): boolean {
    const current = this.findApp(app.accountId, app.clientId);
    if (current === null) return false;
    // Metadata only: the secrets and the registration access token stay those of the stored app.
    this.#apps.set(`${app.accountId}\u0000${app.clientId}`, {
      ...app,
      clientSecretHash: current.clientSecretHash,
      retiringSecrets: current.retiringSecrets,
      registrationAccessTokenHash: current.registrationAccessTokenHash,
      createdAt: current.createdAt,
    });
    return true;
  }

  patchApp(accountId: string, clientId: string, update: (current: App) => AppPatch): App | null {
    // Synchronous from read to write: nothing can change the app in between.
    const current = this.findApp(accountId, clientId);
    if (current === null) return null;
    const next = applyAppPatch(current, update(current));
    this.#apps.set(`${accountId}\u0000${clientId}`, next);
    return next;
  }

  deleteApp(accountId: string, clientId: string): boolean {
    if (!this.#apps.delete(`${accountId}\u0000${clientId}`)) return false;
    const left = (this.#accounts.get(accountId) ?? 1) - 1;
    if (left === 0) this.#accounts.delete(accountId);
    else this.#accounts.set(accountId, left);
    return true;
  }

  rotateClientSecret(accountId: string, clientId: string, secretHash: string, overlapSeconds: number): App | null {
    const current = this.findApp(accountId, clientId);
    if (current === null) return null;
    // Not rounded: a rotation with a 1-second overlap must not lose up to a second of it.
    const now = Date.now() / 1000;
    const retiring = (current.retiringSecrets ?? []).filter((secret) => secret.expiresAt > now);
    if (current.clientSecretHash !== undefined && overlapSeconds > 0) {
      retiring.push({ hash: current.clientSecretHash, expiresAt: now + overlapSeconds });
    }
    const rotated: App = { ...current, clientSecretHash: secretHash, retiringSecrets: retiring };
    this.#apps.set(`${accountId}\u0000${clientId}`, rotated);
    return rotated;
  }
}
