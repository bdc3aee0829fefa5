/**
 * Which of the RFC 8693 token-exchange and RFC 7523 JWT bearer grants an account's metadata lists: those an app of
 * the account is registered for. The registry is asked only when it can list apps; one that cannot leaves them
 * out (the document lists only what works, and a grant no app has does not).
 */
import type { SentinelContext } from '../http/context.js';

const EXCHANGE_GRANTS = ['urn:ietf:params:oauth:grant-type:token-exchange', 'urn:ietf:params:oauth:grant-type:jwt-bearer'] as const;

/**
 * The exchange grants some app of `accountId` is registered for, in a fixed order.
 * @example const extra = await exchangeGrantsOf(context, '123456'); // ['urn:ietf:params:oauth:grant-type:jwt-bearer']
 */
export async function exchangeGrantsOf(context: SentinelContext, accountId: string): Promise<string[]> {
  const { apps } = context;
  if (apps.listApps === undefined) return [];
  const listed = await apps.listApps(accountId);
  return EXCHANGE_GRANTS.filter((grant) => listed.some((app) => app.disabled !== true && app.grantTypes.includes(grant)));
}
