/**
 * The resolved configuration: the options parsed by the schema (defaults filled in), then the checks across fields,
 * then what is derived from more than one option. Every mistake becomes a {@link ConfigurationError} naming the
 * field, at startup rather than at the first request.
 */
import type { App } from '../apps/app.js';
import { ConfigurationError } from '../errors.js';
import { safeErrorReporter } from '../events/error-context.js';
import { NETWORK_MULTIPLE } from '../http/address-bound-default.js';
import { compileTrustProxy } from '../http/trusted-proxies.js';
import { withDefaultAlgorithms } from '../keys/keyring/options.js';
import { parseOptions, throwProblems } from '../lib/strict-options.js';
import type { SentinelOptions } from '../options.js';
import { issuesIDTokens } from '../token/issues-id-tokens.js';
import { checkTrustedIssuers, type TrustedIssuer } from '../trusted-issuers/trusted-issuer.js';
import {
  checkAudienceIsNoResource,
  checkCookieName,
  checkedApps,
  checkIdleLifetimes,
  checkIssuer,
  checkLoginUrl,
  checkNonceKey,
  checkPasskeyOrigins,
} from './checks.js';
import { type Parsed, strictOptionsSchema } from './schema.js';

/**
 * The validated configuration every handler reads (`sentinel.config`), with defaults filled in; `issuer` is the
 * RFC 8414 §2 issuer without a trailing slash.
 * @example sentinel.config.accessTokenTtl // 3600
 */
export interface ResolvedConfig extends Omit<Parsed, 'apps' | 'issuer' | 'trustedIssuers' | 'interactionsPerNetwork'> {
  /** The issuer without a trailing slash. */
  issuer: string;
  /** Whether cookies may omit `Secure` (issuer is http on a loopback host). */
  insecureLoopback: boolean;
  apps: App[];
  /** The `trustedIssuers` option, checked. */
  trustedIssuers: TrustedIssuer[];
  /** The option, or ten times `interactionsPerAddress` (derived, so raising the one raises the other). */
  interactionsPerNetwork: number;
}

/**
 * Validates the options and fills in defaults.
 * @throws ConfigurationError naming the first wrong field.
 */
export function resolveConfig(options: SentinelOptions): ResolvedConfig {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError('options', 'must be an object');
  const result = parseOptions(strictOptionsSchema, options, '');
  if (!result.success) throwProblems(result.problems);
  const parsed = result.data;
  const { issuer, insecureLoopback } = checkIssuer(parsed.issuer);
  checkLoginUrl(parsed.login.url);
  checkPasskeyOrigins(parsed, issuer);
  checkIdleLifetimes(parsed);
  checkCookieName(parsed, insecureLoopback);
  compileTrustProxy(parsed.trustProxy);
  checkNonceKey(parsed);
  const apps = checkedApps(parsed.apps);
  checkAudienceIsNoResource(parsed, apps);
  const algorithmsGiven = (options.keyRotation as { algorithms?: unknown } | undefined)?.algorithms !== undefined;
  const keyRotation = withDefaultAlgorithms(parsed.keyRotation, algorithmsGiven, issuesIDTokens({ ...parsed, apps }));
  const trustedIssuers = checkTrustedIssuers(parsed.trustedIssuers, parsed.clientJwks.allowPrivateAddresses);
  const interactionsPerNetwork = parsed.interactionsPerNetwork ?? NETWORK_MULTIPLE * parsed.interactionsPerAddress;
  // Every report goes through it: the context's account id is often the path's, the caller's text (error-context.ts).
  const onError = safeErrorReporter(parsed.onError);
  return { ...parsed, issuer, insecureLoopback, apps, keyRotation, trustedIssuers, interactionsPerNetwork, onError };
}
