/**
 * A custom user store for the examples: the host application's own users, with passwords hashed by
 * `crypto.scrypt` (a per-user random salt, constant-time comparison). sentinel-idp never sees a stored hash; it only
 * asks `authenticate()` whether a username and password are right (RFC 6749 §3.1: the authorization server
 * authenticates the resource owner, however the host keeps its users).
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { AuthenticatedUser, UserAuthenticator } from 'sentinel-idp';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;
const KEY_LENGTH = 64;

/** One stored user: never the password itself. */
interface StoredUser {
  id: string;
  accountId: string;
  name: string;
  salt: Buffer;
  hash: Buffer;
}

/** A user store the host owns, pluggable into `createSentinel({ users })`. */
export interface DemoUserStore extends UserAuthenticator {
  /** Adds a user; the password is hashed at once and dropped. */
  addUser(input: { id: string; accountId: string; username: string; password: string; name: string }): Promise<void>;
}

/**
 * Creates an in-memory user store with scrypt-hashed passwords.
 * @example
 * const users = createUserStore();
 * await users.addUser({ id: 'u-1', accountId: '123456', username: 'demo', password, name: 'Demo User' });
 * createSentinel({ issuer, apps, users });
 */
export function createUserStore(): DemoUserStore {
  const users = new Map<string, StoredUser>();
  const keyOf = (accountId: string, username: string): string => `${accountId}\u0000${username.toLowerCase()}`;
  // Unknown usernames still pay for one scrypt run, so response time does not reveal which usernames exist.
  const decoy = { salt: randomBytes(16), hash: randomBytes(KEY_LENGTH) };

  return {
    async addUser({ id, accountId, username, password, name }) {
      const salt = randomBytes(16);
      users.set(keyOf(accountId, username), { id, accountId, name, salt, hash: await scryptAsync(password, salt, KEY_LENGTH) });
    },
    async authenticate({ accountId, username, password }): Promise<AuthenticatedUser | null> {
      const user = users.get(keyOf(accountId, username));
      const candidate = await scryptAsync(password, (user ?? decoy).salt, KEY_LENGTH);
      const matches = timingSafeEqual(candidate, (user ?? decoy).hash);
      return user !== undefined && matches ? { id: user.id, name: user.name } : null;
    },
  };
}
