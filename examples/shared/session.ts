/**
 * The demo application's own session (the relying party's, not the service's): after the code exchange it keeps
 * the tokens server-side, in a sentinel-idp `Store` under the digest of a random id that only an HttpOnly cookie
 * carries. The browser never holds a token. Each session has a CSRF token for the demo's forms and a `state` for
 * its RP-initiated logout, both random and compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { parse as parseCookies } from 'cookie';
import type { Store } from 'sentinel-idp';

/** What the last button did, shown once on the next page (post/redirect/get). */
export interface ActionResult {
  title: string;
  /** `false` when the service or the API refused: the panel says so in the error colours. */
  ok: boolean;
  /** Sentences explaining the outcome (plain text). */
  lines: string[];
  /** The HTTP exchange the button made, as the API answered it (never a token value). */
  exchange?: string | undefined;
}

/** One signed-in browser. */
export interface DemoSession {
  userId: string;
  csrf: string;
  /** The `state` of the RP-initiated logout (OIDC RP-Initiated Logout 1.0 §2). */
  logoutState: string;
  idToken: string;
  accessToken: string;
  refreshToken?: string | undefined;
  /** The consumer-bound token from the v2 app-token endpoint, once asked for. */
  consumerToken?: string | undefined;
  result?: ActionResult | undefined;
}

const COOKIE = 'demo_session';
const TTL_MS = 60 * 60 * 1000;

/** A random value for ids, CSRF tokens and states (256 bits). */
export const randomValue = (): string => randomBytes(32).toString('base64url');

/** Constant-time equality of two strings. */
export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The store key of a session: the id is a bearer secret (the cookie), so only its digest names the record. */
const keyOf = (id: string): string => `demo-session:${createHash('sha256').update(id).digest('base64url')}`;

/** The sessions of the demo application. */
export interface DemoSessions {
  /** Starts a session; resolves with the `Set-Cookie` value that carries its id. */
  start(session: DemoSession): Promise<string>;
  /** The session the request's cookie names, or `null`. */
  read(cookieHeader: string | undefined): Promise<{ id: string; session: DemoSession } | null>;
  save(id: string, session: DemoSession): Promise<void>;
  /** Ends the session; resolves with the `Set-Cookie` value that clears the cookie. */
  end(id: string): Promise<string>;
}

/**
 * Creates the sessions over a store. `secure` adds the cookie's Secure attribute (an https issuer).
 * @example const sessions = createDemoSessions(new MemoryStore({ max: 1000 }), false);
 */
export function createDemoSessions(store: Store, secure: boolean): DemoSessions {
  const attributes = `Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  return {
    async start(session) {
      const id = randomValue();
      await store.set(keyOf(id), JSON.stringify(session), TTL_MS);
      return `${COOKIE}=${id}; ${attributes}; Max-Age=${TTL_MS / 1000}`;
    },
    async read(cookieHeader) {
      const id = parseCookies(cookieHeader ?? '')[COOKIE];
      if (id === undefined || !/^[\w-]{43}$/.test(id)) return null;
      const stored = await store.get(keyOf(id));
      return stored === null ? null : { id, session: JSON.parse(stored) as DemoSession };
    },
    save: (id, session) => store.set(keyOf(id), JSON.stringify(session), TTL_MS),
    async end(id) {
      await store.delete(keyOf(id));
      return `${COOKIE}=; ${attributes}; Max-Age=0`;
    },
  };
}
