/**
 * Registration checks of `private_key_jwt` apps (RFC 7591 §2: `jwks` and `jwks_uri` are mutually exclusive; the
 * keys are public).
 */
import { ConfigurationError } from '../errors.js';
import { publicKeyProblem } from '../keys/jwk-public.js';
import { parseAbsoluteURI, webURIProblem } from '../apps/uri-syntax.js';

/** The fields of an app these checks read (structural, so this module does not depend on the app registry). */
interface KeyRegistration {
  jwks?: { keys: readonly Record<string, unknown>[] } | undefined;
  jwksUri?: string | undefined;
  clientSecretHash?: string | undefined;
}

/**
 * Checks the key set of a `private_key_jwt` app; throws a {@link ConfigurationError} naming the field.
 * @example assertValidKeyRegistration({ ...app, tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [publicJwk] } }, 'apps[0]');
 */
export function assertValidKeyRegistration(app: KeyRegistration, field: string): void {
  if ((app.jwks === undefined) === (app.jwksUri === undefined)) {
    throw new ConfigurationError(`${field}.jwks`, 'a private_key_jwt app needs exactly one of jwks or jwksUri');
  }
  if (app.clientSecretHash !== undefined) {
    throw new ConfigurationError(`${field}.clientSecret`, 'a private_key_jwt app authenticates with its keys, not a secret');
  }
  if (app.jwks !== undefined) {
    if (!Array.isArray(app.jwks.keys) || app.jwks.keys.length === 0) {
      throw new ConfigurationError(`${field}.jwks.keys`, 'must be a non-empty array of public JWKs');
    }
    app.jwks.keys.forEach((key, index) => {
      const problem = publicKeyProblem(key);
      if (problem !== null) throw new ConfigurationError(`${field}.jwks.keys[${index}]`, problem);
    });
  }
  if (app.jwksUri !== undefined) {
    // Read as written, as a redirect URI is (apps/uri-syntax.ts): the fetch must go to the host that was checked.
    const parts = parseAbsoluteURI(app.jwksUri);
    if (typeof parts === 'string') throw new ConfigurationError(`${field}.jwksUri`, parts);
    if ((parts.scheme !== 'https' && parts.scheme !== 'http') || parts.hasFragment) {
      throw new ConfigurationError(`${field}.jwksUri`, 'must be an absolute https URL without userinfo or fragment');
    }
    const problem = webURIProblem(app.jwksUri, parts);
    if (problem !== null) throw new ConfigurationError(`${field}.jwksUri`, problem);
  }
}

/**
 * Why a key-set URL that {@link assertValidKeyRegistration} took cannot be fetched as the service is configured, or
 * `null`: plain http is fetched only with `clientJwks.allowPrivateAddresses` (development and tests; guarded-fetch.ts
 * refuses it otherwise), so without that an http URL is a configuration that fails every fetch, found at run time.
 * @example plainHttpKeySetProblem('http://id.brand.example/jwks.json', false) // 'must be an https URL (plain http …)'
 */
export function plainHttpKeySetProblem(jwksUri: string, allowPlainHttp: boolean): string | null {
  const parts = parseAbsoluteURI(jwksUri);
  if (allowPlainHttp || typeof parts === 'string' || parts.scheme !== 'http') return null;
  return 'must be an https URL (plain http is fetched only with clientJwks.allowPrivateAddresses, for development)';
}
