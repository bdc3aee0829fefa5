/**
 * A console session without going through the login page: a device session and a console grant put in the user's
 * session index, as a sign-in would leave them, and the operator session tied to them. For the console tests that
 * are about its pages and guards, not its sign-in (test/console-session-origin.test.ts signs in for real).
 */
import { randomBytes } from 'node:crypto';
import { CONSOLE_CLIENT_ID } from '../../src/console/index.js';
import { createOperatorSession } from '../../src/console/operator-session.js';
import { contextOf } from '../../src/http/context.js';
import type { Sentinel, SentinelRequest } from '../../src/index.js';
import { digest } from '../../src/lib/random-secrets.js';
import { indexSession } from '../../src/sessions/carry-over.js';
import { attachGrant, sessionSid } from '../../src/sessions/session-index.js';

/**
 * The `Cookie` header of a console session of `userId` in `accountId` lasting `ttlSeconds`.
 *
 * @example const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
 */
export async function operatorCookie(sentinel: Sentinel, accountId: string, userId: string, ttlSeconds: number): Promise<string> {
  const context = contextOf(sentinel);
  const now = Math.floor(Date.now() / 1000);
  const sessionDigest = digest(randomBytes(32).toString('base64url'));
  const grantId = randomBytes(16).toString('base64url');
  const grantUntil = now + 7200;
  await indexSession(context, { accountId, userId, sessionDigest, authTime: now, sessionEnd: now + 28_800 });
  const sid = sessionSid(accountId, userId, sessionDigest);
  const attached = await attachGrant(context, {
    accountId,
    userId,
    sid,
    clientId: CONSOLE_CLIENT_ID,
    grantId,
    until: grantUntil,
    maxGrantsPerApp: 16,
    maxAppsPerSession: 64,
  });
  if (!attached) throw new Error('the console grant was not attached to its session');
  const id = await createOperatorSession(
    context.store,
    { accountId, userId, sessionDigest, grantId, grantUntil },
    {
      absolute: ttlSeconds,
      idle: ttlSeconds,
    },
  );
  return `sentinel_console=${id}`;
}

/**
 * A request to the console's handler: a GET, or a form POST when `form` is given, with the operator's cookie.
 * @example await sentinel.console.handle(consoleRequest('POST', '/console/123/apps', { cookie, form: { csrf } }));
 */
export function consoleRequest(
  method: string,
  path: string,
  init: { cookie?: string; form?: Record<string, string> } = {},
): SentinelRequest {
  return {
    method,
    path,
    query: new URLSearchParams(),
    headers: {
      ...(init.cookie === undefined ? {} : { cookie: init.cookie }),
      ...(init.form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    body: init.form === undefined ? undefined : new URLSearchParams(init.form).toString(),
  };
}
