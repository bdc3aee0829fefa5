/**
 * Where a logout token may be sent: the app's `backchannelLogoutUri`, under the same address guard as a `jwks_uri`
 * (`src/client-assertion/address-guard.ts`). The URI is the app's, so it could point the service at its own network
 * (a metadata service, an admin port); private, loopback and link-local targets are refused unless
 * `clientJwks.allowPrivateAddresses` (development only) allows them. Checked when an app is configured or registered,
 * and again at every delivery, whose connection is pinned to the address checked (no DNS rebinding in between); the
 * delivery checks the URI's syntax and scheme again first, as registration does (src/logout/post-logout-token.ts).
 */
import { isIP } from 'node:net';
import { backchannelLogoutURIProblem } from '../apps/app-validation.js';
import { isForbiddenAddress } from '../client-assertion/address-guard.js';
import { boundedLookup, LookupSlotTimeout } from '../client-assertion/outbound-lookups.js';
import { ConfigurationError } from '../errors.js';

/** Why a target is refused: says which rule, never echoes a response. */
const PRIVATE = 'points at a private, loopback or link-local address';

function bareHost(uri: string): string | null {
  try {
    const host = new URL(uri).hostname;
    return host.startsWith('[') ? host.slice(1, -1) : host;
  } catch {
    return null;
  }
}

/**
 * The problem of a target that can be told without DNS (an address written out, `localhost`), or `null`.
 *
 * @example literalTargetProblem('https://169.254.169.254/logout', false) // 'points at a private, …'
 */
export function literalTargetProblem(uri: string, allowPrivate: boolean): string | null {
  const host = bareHost(uri);
  if (host === null) return 'must be an absolute URL';
  if (allowPrivate) return null;
  // A fully qualified name may end with the root's dot (`localhost.`): the same name, which many resolvers (systemd's,
  // macOS's) answer with loopback; one that does not would leave the URI registered, refused only at each delivery.
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return PRIVATE;
  return isIP(host) !== 0 && isForbiddenAddress(host) ? PRIVATE : null;
}

/**
 * The address to connect to for `uri`, every address its host resolves to checked; throws an `Error` naming the
 * rule when the target is refused or does not resolve. The lookup waits for one of the process's outbound lookup
 * slots (src/client-assertion/outbound-lookups.ts) until `signal` fires, and then fails as one that does not resolve,
 * its `cause` the {@link LookupSlotTimeout} (a delivery that never got a slot never reached the app: the worker puts
 * it back uncounted); `purpose` names whose turn it takes there (deliveries unless told, so registrations take turns
 * of their own).
 *
 * @example const { address, family } = await resolveLogoutTarget('https://app.example.com/logout', false, AbortSignal.timeout(5000));
 */
export async function resolveLogoutTarget(
  uri: string,
  allowPrivate: boolean,
  signal?: AbortSignal,
  purpose = 'a back-channel logout delivery',
): Promise<{ address: string; family: number }> {
  const literal = literalTargetProblem(uri, allowPrivate);
  if (literal !== null) throw new Error(`the back-channel logout URI ${literal}`);
  const host = bareHost(uri) as string;
  const family = isIP(host);
  if (family !== 0) return { address: host, family };
  let addresses: { address: string; family: number }[];
  try {
    addresses = await boundedLookup(host, purpose, signal);
  } catch (error) {
    // Only the cause tells a lookup that never ran (other lookups held every slot) from one that failed.
    const cause = error instanceof LookupSlotTimeout ? { cause: error } : undefined;
    throw new Error('the back-channel logout URI does not resolve', cause);
  }
  if (addresses.length === 0) throw new Error('the back-channel logout URI does not resolve');
  if (!allowPrivate && addresses.some((entry) => isForbiddenAddress(entry.address))) {
    throw new Error(`the back-channel logout URI ${PRIVATE}`);
  }
  return addresses[0] as { address: string; family: number };
}

/**
 * Whether `error`, thrown by {@link resolveLogoutTarget}, says the lookup never ran: other lookups held every slot
 * until the deadline, so nothing was asked of the app or its name servers.
 *
 * @example if (gotNoLookupSlot(error)) putBackUncounted();
 */
export function gotNoLookupSlot(error: unknown): boolean {
  return error instanceof Error && error.cause instanceof LookupSlotTimeout;
}

/**
 * Why `uri` may not be registered as a back-channel logout URI given where it resolves now, or `null` (also for a
 * name that does not resolve at all, or whose lookup got no slot before `signal` fired).
 *
 * @example if ((await logoutTargetProblem(uri, false)) !== null) throw new OAuthError('invalid_client_metadata', …);
 */
export async function logoutTargetProblem(uri: string, allowPrivate: boolean, signal?: AbortSignal): Promise<string | null> {
  try {
    await resolveLogoutTarget(uri, allowPrivate, signal, 'the check of a back-channel logout URI');
    return null;
  } catch (error) {
    const problem = (error as Error).message.replace('the back-channel logout URI ', '');
    // A name that does not resolve yet (DNS down, a host about to be set up) is no address to refuse: every delivery
    // resolves and checks again, and fails (then retries) while it does not resolve.
    return problem === 'does not resolve' ? null : problem;
  }
}

/**
 * Refuses, as a `ConfigurationError` naming `field`, a back-channel logout URI whose host is (or resolves to) a
 * refused address: `registerApp()` runs it before the app is saved.
 *
 * @example await assertLogoutTarget(config, input.backchannelLogoutUri, 'app.backchannelLogoutUri');
 */
export async function assertLogoutTarget(
  config: { clientJwks: { allowPrivateAddresses: boolean } },
  uri: string | undefined,
  field: string,
): Promise<void> {
  if (typeof uri !== 'string') return;
  // The syntax first (registerApp checks it too, but a malformed URI must not reach DNS).
  const syntax = backchannelLogoutURIProblem(uri);
  const problem = syntax ?? (await logoutTargetProblem(uri, config.clientJwks.allowPrivateAddresses));
  if (problem !== null) throw new ConfigurationError(field, problem);
}
