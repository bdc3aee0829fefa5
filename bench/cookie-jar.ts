/**
 * The bench clients' cookie jar: the cookies of a sign-in, by name, so that the next request of the flow carries them.
 */
/** Cookies by name, dropping those a response clears (Max-Age=0 or an Expires in the past). */
export class CookieJar {
  readonly #cookies = new Map<string, string>();
  absorb(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';', 1)[0] ?? '';
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expires = /;\s*expires=([^;]+)/i.exec(line)?.[1];
      const cleared = /;\s*max-age=0\b/i.test(line) || (expires !== undefined && Date.parse(expires) < Date.now());
      if (value === '' || cleared) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}
